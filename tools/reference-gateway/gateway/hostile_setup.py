"""Hostile or changed Gateways for the setup tests (control commands, see README): a refused
WebSocket upgrade with any status line, a certificate swapped while running, pairing request ids
chosen by the test (`PairingRequests.forced_request_id`) (escape sequences, shell syntax)."""

import tempfile

from websockets.datastructures import Headers
from websockets.http11 import Response

from . import tls


class HostileSetup:
    """The switches, read by the Gateway's upgrade hook and the pairing requests."""

    def __init__(self):
        self.upgrade_status = 0        # 0: upgrades go through
        self.upgrade_reason = ""

    def refusal(self):
        """The HTTP response refusing the upgrade, or None to let it through."""
        if not self.upgrade_status:
            return None
        # The reason phrase goes out as given (ISO-8859-1): control characters included.
        return Response(self.upgrade_status, self.upgrade_reason,
                        Headers([("Content-Length", "0"), ("Connection", "close")]), b"")


class HostileSetupControl:
    """Control commands `upgrade-status`, `rotate-cert`, `pairing-request-id`."""

    async def cmd_upgrade_status(self, args):
        hostile = self.gateway.hostile_setup
        hostile.upgrade_status = int(args.get("status", 0))
        hostile.upgrade_reason = str(args.get("reason", "Not Found"))
        return {"status": hostile.upgrade_status}

    async def cmd_rotate_cert(self, args):
        gateway = self.gateway
        if gateway.ssl_context is None:
            raise ValueError("rotate-cert needs --tls")
        folder = tempfile.mkdtemp(prefix="refgw-rotated-")
        cert, key = tls.ensure_self_signed(folder)
        # New handshakes use the context's current certificate; live connections keep theirs.
        gateway.ssl_context.load_cert_chain(cert, key)
        gateway.fingerprint = tls.leaf_fingerprint(cert)
        return {"tlsFingerprint": gateway.fingerprint}

    async def cmd_pairing_request_id(self, args):
        value = args.get("requestId")
        self.gateway.pairing.forced_request_id = value if isinstance(value, str) and value else None
        return {"requestId": self.gateway.pairing.forced_request_id}
