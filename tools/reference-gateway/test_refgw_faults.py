"""Self-test of the reference Gateway: restarts, faults, hostile input, TLS and exit status.

Run: python3 -m unittest discover -s tools/reference-gateway -v
"""

import asyncio
import hashlib
import json
import os
import tempfile
import unittest

from refgw_harness import (READ_WRITE, SHARED_TOKEN, GatewayProcess, GatewayTestCase, close_code,
                           decode_setup_code, error_code, poll_until, require_schema)
from minimal_client import Identity
from gateway.tls import ensure_self_signed  # only to make a certificate file to hand over


class RestartTests(GatewayTestCase):
    """Restarts in process and as a new process keep the port and the pairings."""

    async def test_restart_announces_shutdown_and_keeps_port_and_pairings(self):
        state_dir = tempfile.TemporaryDirectory(prefix="refgw-state-")
        gw = GatewayProcess("--token", SHARED_TOKEN, "--auto-approve", "--state-dir",
                            state_dir.name, "--tick-interval-ms", "300")
        try:
            identity = Identity()
            client, res = await self.handshake(gw.url, identity, auth={"token": SHARED_TOKEN},
                                               scopes=READ_WRITE)
            token = res["payload"]["auth"]["deviceToken"]
            for name in ("devices.json", "bootstrap-tokens.json"):
                mode = os.stat(os.path.join(state_dir.name, name)).st_mode & 0o777
                self.assertEqual(mode, 0o600, name)
            # From a thread, so this loop can answer the close handshake meanwhile.
            reply = await asyncio.to_thread(gw.control, {"cmd": "restart", "downMs": 300})
            self.assertTrue(reply["ok"], reply)
            shutdown = await client.wait_event("shutdown")
            self.assertEqual(shutdown["payload"]["restartExpectedMs"], 300)
            code, _ = await close_code(client)
            self.assertEqual(code, 1012)
            await poll_until(lambda: gw.control("status")["listening"],
                             "listening again after the restart")
            self.assertEqual(gw.control("status")["port"], gw.info["port"])
            client, res = await self.handshake(gw.url, identity, auth={"token": token},
                                               scopes=READ_WRITE)
            self.assertTrue(res["ok"], res)
            await client.close()
        finally:
            await self.stop(gw)
        again = GatewayProcess("--token", SHARED_TOKEN, "--state-dir", state_dir.name,
                               "--port", str(gw.info["port"]))
        try:
            self.assertEqual(again.url, gw.url)
            client, res = await self.handshake(again.url, identity, auth={"token": token},
                                               scopes=READ_WRITE)
            self.assertTrue(res["ok"], res)
            await client.close()
        finally:
            await self.stop(again)
            state_dir.cleanup()

    async def test_startup_unavailable_then_auto_approve_after_attempts(self):
        gw = GatewayProcess("--startup-unavailable", "1", "--startup-retry-after-ms", "50",
                            "--auto-approve-after-attempts", "2", "--remote")
        try:
            identity = Identity()
            _, res = await self.handshake(gw.url, identity)
            self.assertEqual((res["error"]["code"], res["error"]["retryAfterMs"]),
                             ("UNAVAILABLE", 50))
            _, res = await self.handshake(gw.url, identity)
            self.assertEqual(error_code(res), "PAIRING_REQUIRED")
            client, res = await self.handshake(gw.url, identity)
            self.assertTrue(res["ok"], res)
        finally:
            await self.stop(gw)

    async def test_drop_closes_sockets_without_a_close_frame(self):
        gw = GatewayProcess("--auto-approve")
        try:
            client, res = await self.handshake(gw.url, Identity())
            self.assertTrue(res["ok"], res)
            self.assertEqual(gw.control("drop")["dropped"], 1)
            code, _ = await close_code(client)
            self.assertIsNone(code)
        finally:
            await self.stop(gw)


def is_genuine_event(message):
    """A tick or presence event refgw sends on its own (told apart from hostile look-alikes)."""
    try:
        frame = json.loads(message)
    except (ValueError, TypeError, RecursionError):
        return False
    if not isinstance(frame, dict) or frame.get("event") not in ("tick", "presence"):
        return False
    seq, payload = frame.get("seq"), frame.get("payload")
    if not (isinstance(seq, int) and 0 < seq < 10 ** 6 and isinstance(payload, dict)):
        return False
    return frame["event"] == "presence" or (isinstance(payload.get("ts"), int)
                                            and payload["ts"] > 10 ** 12)


class PasswordAndRobustnessTests(GatewayTestCase):
    """Password mode, size limits after hello, hostile input, and raw frames sent to clients."""

    @classmethod
    def setUpClass(cls):
        cls.gw = GatewayProcess("--password", "pw-selftest", "--auto-approve", "--max-payload",
                                "100000", "--handshake-timeout-ms", "500", "--quiet")

    @classmethod
    def tearDownClass(cls):
        cls.gw.stop()
        log = cls.gw.stderr_text()
        assert "pw-selftest" not in log, "the password leaked into the Gateway's log"
        assert "Traceback" not in log, "refgw crashed on hostile input:\n" + log[-3000:]

    def tearDown(self):
        self.gw.control("clear-violations")

    async def test_password_checks(self):
        for auth, expected in (({}, "AUTH_PASSWORD_MISSING"),
                               ({"password": "nope"}, "AUTH_PASSWORD_MISMATCH")):
            _, res = await self.handshake(self.gw.url, Identity(), auth=auth)
            self.assertEqual(error_code(res), expected)
        client, res = await self.handshake(self.gw.url, Identity(),
                                           auth={"password": "pw-selftest"})
        self.assertTrue(res["ok"], res)
        self.assertEqual(res["payload"]["policy"]["maxPayload"], 100000)

    async def test_max_payload_is_enforced_after_hello(self):
        client, res = await self.handshake(self.gw.url, Identity(),
                                           auth={"password": "pw-selftest"})
        await client.ws.send(json.dumps({"type": "req", "id": "big", "method": "health",
                                         "params": {"pad": "z" * 120000}}))
        code, _ = await close_code(client)
        self.assertEqual(code, 1009)

    async def test_first_request_must_be_connect_and_silence_times_out(self):
        client = await self.open(self.gw.url)
        res = await client.request("health", {})
        self.assertEqual(res["error"]["code"], "INVALID_REQUEST")
        self.assertEqual((await close_code(client))[0], 1008)
        client = await self.open(self.gw.url)
        code, reason = await close_code(client, timeout=3)
        self.assertEqual((code, reason), (1008, "handshake timeout"))

    async def test_hostile_client_frames_never_break_the_gateway(self):
        hostile = ["", "{", "[]", "null", "42", '"x"', '{"type":"req"}', '{"type":"req","id":""}',
                   '{"type":"req","id":"1","method":"connect","params":[]}',
                   '{"type":"req","id":"1","method":"connect","params":{"client":7}}',
                   '{"type":"req","id":"1","method":"connect","params":{"minProtocol":3,'
                   '"maxProtocol":3,"client":{"id":"test","version":"1","platform":"x",'
                   '"mode":"test"},"device":{"id":1,"publicKey":[],"signature":{},'
                   '"signedAt":"now","nonce":null}}}',
                   b"\xff\xfe\x00garbage", b"\x00" * 100, '{"type":"cancel","id":""}',
                   '{"type":"req","id":"1","method":"connect","params":'
                   + "[" * 5000 + "]" * 5000 + "}",
                   '{"type":"req","id":"1","method":"connect","params":{"permissions":'
                   + '{"a":' * 900 + "true" + "}" * 900 + "}}"]
        for message in hostile * 5:
            client = await self.open(self.gw.url)
            await client.ws.send(message)
            await close_code(client, timeout=3)
        client, res = await self.handshake(self.gw.url, Identity(),
                                           auth={"password": "pw-selftest"})
        for message in hostile:
            await client.ws.send(message)
        res = await client.request("health", {})
        self.assertTrue(res["ok"], res)
        self.assertEqual(self.gw.control("status")["serverViolations"], 0)
        self.assertIn("ok", self.gw.control("frames 40"))
        # Without the schema only unparseable frames are counted.
        require_schema(self, self.gw.info, "the violation count of hostile frames")
        self.assertGreaterEqual(self.gw.control("violations")["count"], len(hostile) * 5)

    async def test_send_raw_reaches_connected_clients(self):
        client, _ = await self.handshake(self.gw.url, Identity(), auth={"password": "pw-selftest"})
        async def next_raw():
            while True:  # skip the Gateway's own presence/tick events
                message = await asyncio.wait_for(client.ws.recv(), 2)
                if not (isinstance(message, str) and message.startswith('{"type":"event","event":"')
                        and not message.startswith('{"type":"event","event":"refgw.filler"')):
                    return message
        self.assertEqual(self.gw.control({"cmd": "send-raw", "text": "not json"})["sent"], 1)
        self.assertEqual(await next_raw(), "not json")
        self.gw.control({"cmd": "send-raw", "hex": "00ff", "binary": True})
        self.assertEqual(await next_raw(), b"\x00\xff")
        self.gw.control({"cmd": "send-raw", "size": 70000})
        self.assertEqual(len(await next_raw()), 70000)
        self.gw.control({"cmd": "send-raw", "wire": "8a"})   # a truncated frame header
        self.gw.control("drop")


    async def test_fuzz_sends_the_requested_number_of_hostile_messages(self):
        client, _ = await self.handshake(self.gw.url, Identity(), auth={"password": "pw-selftest"})
        kinds = ["bad-json", "wrong-types", "unknown", "binary-garbage", "deep-nesting",
                 "stray-response", "huge-numbers"]   # a Python client rejects invalid UTF-8 itself
        reply = self.gw.control({"cmd": "fuzz", "count": 2000, "seed": 7, "kinds": kinds})
        self.assertEqual((reply["count"], reply["connections"]), (2000, 1))
        hostile = 0
        while hostile < 2000:
            if not is_genuine_event(await asyncio.wait_for(client.ws.recv(), 5)):
                hostile += 1
        progress = self.gw.control("status")["fuzz"]
        self.assertEqual((progress["running"], progress["sent"]), (False, 2000))
        self.assertEqual(set(progress["byKind"]), set(kinds))
        self.assertFalse(self.gw.control({"cmd": "fuzz", "kinds": ["nope"]})["ok"])


class TlsAndExitTests(GatewayTestCase):
    """wss:// with a self-signed certificate, the strict exit status and the no-schema mode."""

    async def test_wss_serves_the_printed_fingerprint_and_setup_code_carries_it(self):
        gw = GatewayProcess("--tls", "--auto-approve", "--print-setup-code")
        try:
            self.assertTrue(gw.url.startswith("wss://"))
            fingerprint = gw.info["tlsFingerprint"]
            self.assertRegex(fingerprint, "^[0-9a-f]{64}$")
            self.assertEqual(decode_setup_code(gw.info["setupCode"])["tlsFingerprint"], fingerprint)
            client, res = await self.handshake(gw.url, Identity())
            self.assertTrue(res["ok"], res)
            der = client.ws.transport.get_extra_info("ssl_object").getpeercert(binary_form=True)
            self.assertEqual(hashlib.sha256(der).hexdigest(), fingerprint)
            await client.close()
        finally:
            await self.stop(gw)

    async def test_a_given_certificate_is_served_and_pinned(self):
        from cryptography import x509
        from cryptography.hazmat.primitives.serialization import Encoding
        with tempfile.TemporaryDirectory(prefix="refgw-cert-") as folder:
            cert_path, key_path = ensure_self_signed(folder)
            with open(cert_path, "rb") as handle:
                der = x509.load_pem_x509_certificate(handle.read()).public_bytes(Encoding.DER)
            gw = GatewayProcess("--tls-cert", cert_path, "--tls-key", key_path, "--auto-approve")
            try:
                self.assertEqual(gw.info["tlsFingerprint"], hashlib.sha256(der).hexdigest())
                client, res = await self.handshake(gw.url, Identity())
                self.assertTrue(res["ok"], res)
            finally:
                await self.stop(gw)

    async def test_strict_mode_exits_with_status_3_after_a_violation(self):
        gw = GatewayProcess("--strict", "--auto-approve")
        if gw.info["schema"] is None:
            await self.stop(gw)
            require_schema(self, gw.info, "the strict exit status")
        client = await self.open(gw.url)
        await client.ws.send('{"type":"req","id":"1","method":"connect","params":{}}')
        await close_code(client)
        self.assertEqual(await self.stop(gw), 3)
        clean = GatewayProcess("--strict")
        self.assertEqual(await self.stop(clean), 0)

    async def test_missing_schema_is_said_plainly(self):
        gw = GatewayProcess("--schema", "/nonexistent/schema.json", "--auto-approve")
        try:
            self.assertIsNone(gw.info["schema"])
            client, res = await self.handshake(gw.url, Identity())
            self.assertTrue(res["ok"], res)
            await client.close()
        finally:
            await self.stop(gw)
        self.assertIn("WITHOUT schema validation", gw.stderr_text())


if __name__ == "__main__":
    unittest.main()


class SendRawHangupTests(unittest.IsolatedAsyncioTestCase):
    """`send-raw` to a client that hangs up (on an earlier hostile message, or on this one) still answers."""

    async def test_send_raw_skips_a_client_that_hung_up_and_counts_the_rest(self):
        from websockets.exceptions import ConnectionClosed
        from gateway.server import Gateway

        class Socket:
            def __init__(self, closed):
                self.closed, self.sent = closed, []

            async def send(self, message, text=None):
                if self.closed:
                    raise ConnectionClosed(None, None)
                self.sent.append((message, text))

        class Conn:
            def __init__(self, ws):
                self.ws = ws

        gone, live = Conn(Socket(closed=True)), Conn(Socket(closed=False))
        gw = Gateway.__new__(Gateway)  # only send_raw is exercised: no server, no sockets
        gw.targets = lambda target: [gone, live]
        sent = await gw.send_raw({"hex": "7bc3287d", "asText": True, "target": "authenticated"})
        self.assertEqual(sent, 1)
        self.assertEqual(live.ws.sent, [(bytes.fromhex("7bc3287d"), True)])
