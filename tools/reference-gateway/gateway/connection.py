"""One client socket: challenge, the connect handshake, then requests until it closes."""

import asyncio
import json
import secrets
import sys
import traceback
import uuid

from websockets.exceptions import ConnectionClosed

from .codec import dumps, now_ms, preview
from .errors import ConnectRejected, CLOSE_POLICY, close_reason_bytes_safe, error_shape
from .handshake import admit, hello_ok
from .methods import MethodError
from .talk_relay_methods import CONCURRENT_METHODS

CLOSE_TOO_BIG = 1009


class Connection:
    """State of one socket; the gateway's loop is the only thread that touches it."""

    def __init__(self, gateway, ws):
        self.gateway = gateway
        self.ws = ws
        self.conn_id = str(uuid.uuid4())
        self.challenge = None
        self.authenticated = False
        self.role = None
        self.scopes = []
        self.device_id = None
        self.client = {}
        self.caps = []     # a node's declared caps (talk.mode needs a Talk-capable node)
        self.commands = []  # a node's declared commands (node.invoke forwards only these)
        self.seq = 0

    # -- lifecycle -----------------------------------------------------------------------------

    async def run(self):
        """Serves the socket until it closes."""
        gw = self.gateway
        gw.log("connection %s opened from %s" % (self.conn_id, _peer(self.ws)))
        try:
            if not gw.faults.no_challenge:
                self.challenge = {"nonce": secrets.token_urlsafe(16), "ts": now_ms()}
                await self.send({"type": "event", "event": "connect.challenge",
                                 "payload": dict(self.challenge)})
            else:
                self.challenge = {"nonce": "", "ts": 0}
            deadline = asyncio.get_running_loop().time() + gw.options.handshake_timeout_ms / 1000
            while True:
                if self.authenticated:
                    raw = await self.ws.recv()
                else:
                    remaining = deadline - asyncio.get_running_loop().time()
                    try:
                        raw = await asyncio.wait_for(self.ws.recv(), max(remaining, 0.001))
                    except asyncio.TimeoutError:
                        await self.close(CLOSE_POLICY, "handshake timeout")
                        return
                await self.handle(raw)
        except ConnectionClosed as closed:
            self._note_oversized(closed)
        except Exception as failure:  # a refgw bug must not take the whole Gateway down
            gw.log("BUG: connection %s failed: %r" % (self.conn_id, failure))
            traceback.print_exc(file=sys.stderr)
            await self.ws.close(1011, "internal error")
        finally:
            gw.log("connection %s closed (code %s)" % (self.conn_id, self.ws.close_code))

    def _note_oversized(self, closed):
        """Records a message over the size limit (websockets already closed with 1009)."""
        if closed.sent is None or closed.sent.code != CLOSE_TOO_BIG:
            return
        options = self.gateway.options
        limit = options.max_payload if self.authenticated else options.preauth_max_payload
        phase = "maxPayload" if self.authenticated else "pre-auth"
        self.gateway.violations.record(self.conn_id, "oversized", "<frame over %d bytes>" % limit,
                                       ["frame larger than the %s limit of %d bytes"
                                        % (phase, limit)])

    async def close(self, code, reason):
        await self.ws.close(code, close_reason_bytes_safe(reason))

    # -- sending -------------------------------------------------------------------------------

    async def send(self, frame):
        """Sends a frame as a text message, checking it against the schema first."""
        checker = self.gateway.checker
        if checker is not None:
            errors = checker.check_outgoing(frame)
            if errors:
                self.gateway.violations.record_server(frame, errors)
        await self.ws.send(dumps(frame))

    async def send_event(self, event, payload, state_version=None):
        """Sends an event with this connection's next sequence number."""
        self.seq += 1
        frame = {"type": "event", "event": event, "payload": payload, "seq": self.seq}
        if state_version is not None:
            frame["stateVersion"] = state_version
        await self.send(frame)

    async def respond(self, req_id, payload=None, error=None):
        frame = {"type": "res", "id": req_id, "ok": error is None}
        if error is None:
            frame["payload"] = payload
        else:
            frame["error"] = error
        await self.send(frame)

    # -- receiving -----------------------------------------------------------------------------

    async def handle(self, raw):
        """Parses, logs, validates and dispatches one received message (text or binary)."""
        gw = self.gateway
        frame = self._parse(raw)
        gw.log_frame(self.conn_id, raw, frame)
        if frame is None:
            gw.violations.record(self.conn_id, "invalid-json", preview(raw),
                                 ["message is not a JSON object (UTF-8)"])
            if not self.authenticated:
                await self.close(CLOSE_POLICY, "invalid frame")
            return
        if _is_cancel(frame):
            return  # additive client frame newer than the schema; old Gateways ignore it (§1.2)
        errors = gw.check_frame(frame)
        if errors:
            gw.violations.record(self.conn_id, "schema", frame, errors)
            req_id = frame.get("id")
            if frame.get("type") == "req" and isinstance(req_id, str) and req_id:
                details = {"reason": "schema", "errors": errors}
                device_code = _device_detail_code(errors)
                if device_code and frame.get("method") == "connect":
                    details["code"] = device_code
                await self.respond(req_id, error=error_shape(
                    "INVALID_REQUEST", "invalid frame: " + errors[0], details=details))
            if not self.authenticated:
                await self.close(CLOSE_POLICY, "invalid frame")
            return
        if frame.get("type") != "req":
            if not self.authenticated:
                gw.violations.record(self.conn_id, "protocol", frame,
                                     ["the first client frame must be the connect request"])
                await self.close(CLOSE_POLICY, "first request must be connect")
            return  # responses (node.invoke results) and client events need no answer here
        if not self.authenticated:
            await self._connect(frame)
        elif frame["method"] == "connect":
            await self.respond(frame["id"], error=error_shape("INVALID_REQUEST",
                                                              "already connected"))
        elif frame["method"] in CONCURRENT_METHODS:
            self.gateway.spawn(self._request(frame))
        else:
            await self._request(frame)

    def _parse(self, raw):
        try:
            text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
            frame = json.loads(text)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None  # RecursionError: nesting deeper than the parser allows
        return frame if isinstance(frame, dict) else None

    async def _connect(self, frame):
        gw = self.gateway
        if frame["method"] != "connect":
            gw.violations.record(self.conn_id, "protocol", frame,
                                 ["the first request must be connect, not %s" % frame["method"]])
            await self.respond(frame["id"], error=error_shape(
                "INVALID_REQUEST", "first request must be connect"))
            await self.close(CLOSE_POLICY, "first request must be connect")
            return
        try:
            admission = admit(gw, self.conn_id, frame.get("params") or {}, self.challenge)
        except ConnectRejected as rejected:
            gw.log("connect %s rejected: %s %s" % (self.conn_id, rejected.shape["code"],
                                                   rejected.detail_code or ""))
            await self.respond(frame["id"], error=rejected.shape)
            await self.close(rejected.close_code, rejected.close_reason)
            return
        self.authenticated = True
        self.role, self.scopes = admission.role, admission.scopes
        self.device_id, self.client = admission.device_id, admission.client
        self.caps = [c for c in (frame.get("params") or {}).get("caps") or [] if isinstance(c, str)]
        self.commands = [c for c in (frame.get("params") or {}).get("commands") or []
                         if isinstance(c, str)]
        self.ws.protocol.max_message_size = gw.options.max_payload
        changed = gw.presence.join(self.conn_id, self.client, self.role, self.scopes,
                                   self.device_id)
        await self.respond(frame["id"], payload=hello_ok(gw, self.conn_id, admission))
        gw.log("connect %s ok: role=%s client=%s/%s device=%s" % (
            self.conn_id, self.role, self.client.get("id"), self.client.get("mode"),
            (self.device_id or "-")[:12]))
        if changed:
            await gw.broadcast_presence()
        if self.role == "node":
            # A node receives the wake phrases as a snapshot right after connecting (it may not call
            # voicewake.get): openclaw/openclaw docs nodes/voicewake.md, src/gateway/server-node-events.ts.
            await self.send_event("voicewake.changed", {"triggers": list(gw.talk_voice.triggers)})

    async def _request(self, frame):
        try:
            payload = await self.gateway.methods.call(self, frame["method"], frame.get("params"))
        except MethodError as failure:
            await self.respond(frame["id"], error=failure.shape)
            return
        await self.respond(frame["id"], payload=payload)


def _is_cancel(frame):
    """A well-formed `{type: "cancel", id}` frame."""
    return (frame.get("type") == "cancel" and set(frame) == {"type", "id"}
            and isinstance(frame["id"], str) and bool(frame["id"]))


def _device_detail_code(errors):
    """The DEVICE_AUTH_* code a schema error in `params.device` amounts to, if any."""
    device_errors = [e for e in errors if e.startswith("params.device")]
    if not device_errors:
        return None
    if any("nonce" in e for e in device_errors):
        return "DEVICE_AUTH_NONCE_REQUIRED"
    return "DEVICE_AUTH_INVALID"


def _peer(ws):
    try:
        host, port = ws.remote_address[:2]
        return "%s:%s" % (host, port)
    except (TypeError, ValueError):
        return "?"
