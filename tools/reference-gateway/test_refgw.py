"""Self-test of the reference Gateway over real sockets, with an independent minimal client.

Run: python3 -m unittest discover -s tools/reference-gateway -v
"""

import asyncio
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from websockets.exceptions import ConnectionClosed

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from minimal_client import Client, Identity, connect_params, handshake  # noqa: E402
from gateway.setup_code import decode_setup_code  # noqa: E402

REFGW = os.path.join(HERE, "refgw.py")
SHARED_TOKEN = "shared-secret-for-selftest"
READ_WRITE = ["operator.read", "operator.write"]


class GatewayProcess:
    """A refgw child process, its startup JSON and its control channel."""

    def __init__(self, *args):
        self.args = list(args)
        self.stderr = tempfile.NamedTemporaryFile(prefix="refgw-stderr-", delete=False)
        self.proc = subprocess.Popen([sys.executable, REFGW, *self.args], stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True)
        self.stderr.close()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("refgw did not start: " + self.stderr_text())
        self.info = json.loads(line)
        self.url = self.info["url"]
        self.control_port = self.info["controlPort"]

    def control(self, line):
        """Sends one control line; returns the decoded reply."""
        if not isinstance(line, str):
            line = json.dumps(line)
        with socket.create_connection(("127.0.0.1", self.control_port), timeout=10) as sock:
            handle = sock.makefile("rw")
            handle.write(line + "\n")
            handle.flush()
            return json.loads(handle.readline())

    def stop(self):
        """Shuts the Gateway down through the control channel; returns its exit status."""
        if self.proc.poll() is None:
            try:
                self.control("shutdown")
            except OSError:
                self.proc.terminate()
        try:
            return self.proc.wait(timeout=10)
        finally:
            self.proc.stdout.close()

    def stderr_text(self):
        with open(self.stderr.name, encoding="utf-8", errors="replace") as handle:
            return handle.read()


def error_code(response):
    return (response.get("error") or {}).get("details", {}).get("code")


async def close_code(client, timeout=5):
    """Waits for the server to close the socket; returns (code, reason)."""
    try:
        while True:
            await client.recv(timeout)
    except ConnectionClosed as closed:
        frame = closed.rcvd
        return (frame.code, frame.reason) if frame else (None, "")


class GatewayTestCase(unittest.IsolatedAsyncioTestCase):
    """Async test case whose blocking control calls do not trip asyncio's slow-callback log."""

    async def asyncSetUp(self):
        asyncio.get_running_loop().slow_callback_duration = 30
        self.clients = []

    async def asyncTearDown(self):
        for client in self.clients:
            await client.close()

    async def handshake(self, url, identity, **kwargs):
        """A full handshake whose socket is closed when the test ends."""
        client, response = await handshake(url, identity, **kwargs)
        self.clients.append(client)
        return client, response

    async def open(self, url):
        client = await Client.open(url)
        self.clients.append(client)
        return client


class HandshakeTests(GatewayTestCase):
    """A token-mode Gateway that approves pairings at once."""

    @classmethod
    def setUpClass(cls):
        cls.gw = GatewayProcess("--token", SHARED_TOKEN, "--auto-approve",
                                "--tick-interval-ms", "300")
        cls.has_schema = cls.gw.info["schema"] is not None

    @classmethod
    def tearDownClass(cls):
        cls.gw.stop()
        log = cls.gw.stderr_text()
        assert SHARED_TOKEN not in log, "the shared token leaked into the Gateway's log"
        assert "dt_" not in log, "a device token leaked into the Gateway's log"

    def tearDown(self):
        self.gw.control("clear-violations")
        self.gw.control("reject-signature off")

    async def connect(self, identity=None, **kwargs):
        kwargs.setdefault("auth", {"token": SHARED_TOKEN})
        kwargs.setdefault("scopes", READ_WRITE)
        return await self.handshake(self.gw.url, identity or Identity(), **kwargs)

    async def test_v3_signature_is_accepted_and_hello_ok_is_complete(self):
        client, res = await self.connect()
        self.assertTrue(res["ok"], res)
        hello = res["payload"]
        self.assertEqual(hello["type"], "hello-ok")
        self.assertEqual(hello["protocol"], 3)
        self.assertEqual(hello["policy"]["tickIntervalMs"], 300)
        self.assertEqual(hello["auth"]["role"], "operator")
        self.assertEqual(hello["auth"]["scopes"], READ_WRITE)
        self.assertTrue(hello["auth"]["deviceToken"])
        self.assertEqual(hello["snapshot"]["sessionDefaults"]["mainSessionKey"], "agent:main:main")
        self.assertIn("system-presence", hello["features"]["methods"])
        await client.close()
        status = self.gw.control("status")
        self.assertEqual(status["serverViolations"], 0)

    async def test_v2_signature_is_accepted(self):
        client, res = await self.connect(version="v2")
        self.assertTrue(res["ok"], res)
        await client.close()

    async def test_connect_sent_as_a_binary_message_is_accepted(self):
        client, res = await self.connect(binary=True)
        self.assertTrue(res["ok"], res)
        await client.close()

    async def test_bad_device_proofs_get_their_detail_codes(self):
        stale = int(time.time() * 1000) - 3 * 60 * 1000
        cases = [({"sign_token": "not-the-token"}, "DEVICE_AUTH_SIGNATURE_INVALID"),
                 ({"device_id": "0" * 64}, "DEVICE_AUTH_DEVICE_ID_MISMATCH"),
                 ({"signed_at": stale}, "DEVICE_AUTH_SIGNATURE_EXPIRED"),
                 ({"nonce": "some-other-nonce"}, "DEVICE_AUTH_NONCE_MISMATCH")]
        for tamper, expected in cases:
            with self.subTest(expected=expected):
                client, res = await self.connect(**tamper)
                self.assertFalse(res["ok"])
                self.assertEqual(error_code(res), expected)
                code, _ = await close_code(client)
                self.assertEqual(code, 1008)

    async def test_a_missing_nonce_is_a_schema_violation_with_the_device_code(self):
        if not self.has_schema:
            self.skipTest("SKIPPED: ../shared not found: schema validation not checked")
        client = await self.open(self.gw.url)
        params = connect_params(Identity(), client.challenge, auth={"token": SHARED_TOKEN})
        del params["device"]["nonce"]
        res = await client.request("connect", params)
        self.assertEqual(error_code(res), "DEVICE_AUTH_NONCE_REQUIRED")

    async def test_reject_signature_fault_and_v3_only_rejection(self):
        self.gw.control("reject-signature on")
        client, res = await self.connect()
        self.assertEqual(error_code(res), "DEVICE_AUTH_SIGNATURE_INVALID")
        self.gw.control("reject-signature v3")
        client, res = await self.connect(version="v3")
        self.assertEqual(error_code(res), "DEVICE_AUTH_SIGNATURE_INVALID")
        client, res = await self.connect(version="v2")
        self.assertTrue(res["ok"], res)
        await client.close()

    async def test_shared_token_missing_and_mismatch(self):
        _, res = await self.connect(auth={})
        self.assertEqual(error_code(res), "AUTH_TOKEN_MISSING")
        _, res = await self.connect(auth={"token": "wrong"})
        self.assertEqual(error_code(res), "AUTH_TOKEN_MISMATCH")

    async def test_device_token_reconnects_in_token_and_device_token_fields(self):
        identity = Identity()
        client, res = await self.connect(identity)
        token = res["payload"]["auth"]["deviceToken"]
        await client.close()
        for auth in ({"token": token}, {"deviceToken": token}):
            client, res = await self.connect(identity, auth=auth)
            self.assertTrue(res["ok"], res)
            self.assertEqual(res["payload"]["auth"]["deviceToken"], token)
            await client.close()
        _, res = await self.connect(Identity(), auth={"deviceToken": token})
        self.assertEqual(error_code(res), "AUTH_DEVICE_TOKEN_MISMATCH")

    async def test_protocol_mismatch_carries_the_ranges(self):
        client, res = await self.connect(min_protocol=1, max_protocol=2)
        self.assertEqual(error_code(res), "PROTOCOL_MISMATCH")
        details = res["error"]["details"]
        self.assertEqual((details["clientMinProtocol"], details["clientMaxProtocol"],
                          details["expectedProtocol"]), (1, 2, 3))
        code, _ = await close_code(client)
        self.assertEqual(code, 1002)

    async def test_a_node_may_use_the_previous_protocol(self):
        client, res = await self.connect(role="node", scopes=[], client_id="node-host",
                                         mode="node", min_protocol=2, max_protocol=2)
        self.assertTrue(res["ok"], res)
        await client.close()
        _, res = await self.connect(min_protocol=2, max_protocol=2)
        self.assertEqual(error_code(res), "PROTOCOL_MISMATCH")

    async def test_ticks_arrive_at_the_advertised_interval(self):
        client, res = await self.connect()
        started = time.monotonic()
        first = await client.wait_event("tick", timeout=2)
        second = await client.wait_event("tick", timeout=2)
        elapsed = time.monotonic() - started
        self.assertGreater(second["seq"], first["seq"])
        self.assertLess(elapsed, 2.0)
        self.gw.control("stop-ticks")
        try:
            with self.assertRaises(asyncio.TimeoutError):
                await client.wait_event("tick", timeout=1.0)
        finally:
            self.gw.control("start-ticks")
        await client.wait_event("tick", timeout=2)
        await client.close()

    async def test_system_presence_lists_the_connected_client(self):
        identity = Identity()
        client, res = await self.connect(identity, platform="linux", device_family="Linux")
        snapshot_ids = [e.get("deviceId") for e in res["payload"]["snapshot"]["presence"]]
        self.assertIn(identity.device_id, snapshot_ids)
        presence = await client.request("system-presence", {})
        entries = [e for e in presence["payload"] if e.get("deviceId") == identity.device_id]
        self.assertEqual(len(entries), 1)
        self.assertEqual(entries[0]["instanceId"], "inst-" + identity.device_id[:8])
        self.assertEqual(entries[0]["deviceFamily"], "Linux")
        self.assertEqual(entries[0]["roles"], ["operator"])
        await client.close()

    async def test_chat_send_needs_write_and_echoes_a_final_event(self):
        client, _ = await self.connect(scopes=["operator.read"])
        params = {"sessionKey": "agent:main:main", "message": "hello", "idempotencyKey": "k-1"}
        res = await client.request("chat.send", params)
        self.assertEqual(res["error"]["code"], "FORBIDDEN")
        self.assertEqual(res["error"]["details"]["code"], "MISSING_SCOPE")
        await client.close()
        client, _ = await self.connect()
        res = await client.request("chat.send", params)
        self.assertEqual(res["payload"]["status"], "started")
        while True:  # other tests' runs may still be echoing to every operator
            event = await client.wait_event("chat")
            payload = event["payload"]
            if payload["state"] == "final" and payload["runId"] == res["payload"]["runId"]:
                break
        self.assertIn("hello", event["payload"]["message"]["content"][0]["text"])
        await client.close()

    async def test_schema_violation_is_answered_recorded_and_redacted(self):
        if not self.has_schema:
            self.skipTest("SKIPPED: ../shared not found: schema validation not checked")
        identity = Identity()
        client = await self.open(self.gw.url)
        params = connect_params(identity, client.challenge, auth={"token": SHARED_TOKEN})
        params["minProtocol"] = "3"
        res = await client.request("connect", params)
        self.assertEqual(res["error"]["code"], "INVALID_REQUEST")
        violations = self.gw.control("violations")
        self.assertEqual(violations["count"], 1)
        self.assertIn("minProtocol", violations["violations"][0]["errors"][0])
        self.assertNotIn(SHARED_TOKEN, json.dumps(violations))
        self.assertNotIn(SHARED_TOKEN, json.dumps(self.gw.control("frames")))

    async def test_oversized_pre_auth_frame_is_refused(self):
        client = await self.open(self.gw.url)
        await client.ws.send("x" * (65 * 1024))
        code, _ = await close_code(client)
        self.assertEqual(code, 1009)
        await asyncio.sleep(0.1)
        kinds = [v["kind"] for v in self.gw.control("violations")["violations"]]
        self.assertIn("oversized", kinds)

    async def test_a_large_frame_after_hello_is_allowed(self):
        client, _ = await self.connect()
        params = {"sessionKey": "agent:main:main", "message": "y" * (100 * 1024),
                  "idempotencyKey": "big-1"}
        res = await client.request("chat.send", params)
        self.assertTrue(res["ok"], res)
        await client.close()

    async def test_unavailable_and_injected_connect_failures(self):
        self.gw.control({"cmd": "unavailable", "count": 1, "retryAfterMs": 250})
        _, res = await self.connect()
        self.assertEqual(res["error"]["code"], "UNAVAILABLE")
        self.assertEqual(res["error"]["retryAfterMs"], 250)
        self.assertEqual(res["error"]["details"]["reason"], "startup-sidecars")
        self.gw.control("rate-limit 1 700")
        _, res = await self.connect()
        self.assertEqual(error_code(res), "AUTH_RATE_LIMITED")
        self.assertEqual(res["error"]["retryAfterMs"], 700)
        client, res = await self.connect()
        self.assertTrue(res["ok"], res)
        await client.close()


class PairingTests(GatewayTestCase):
    """A Gateway that leaves pairings pending, with a setup code and a state directory."""

    @classmethod
    def setUpClass(cls):
        cls.state_dir = tempfile.TemporaryDirectory(prefix="refgw-state-")
        cls.gw = GatewayProcess("--token", SHARED_TOKEN, "--print-setup-code", "--state-dir",
                                cls.state_dir.name, "--tick-interval-ms", "300")

    @classmethod
    def tearDownClass(cls):
        cls.gw.stop()
        cls.state_dir.cleanup()

    async def test_pairing_is_pending_until_approved(self):
        identity = Identity()
        kwargs = {"auth": {"token": SHARED_TOKEN}, "scopes": READ_WRITE}
        client, res = await self.handshake(self.gw.url, identity, **kwargs)
        self.assertEqual(res["error"]["code"], "NOT_PAIRED")
        details = res["error"]["details"]
        self.assertEqual(details["code"], "PAIRING_REQUIRED")
        self.assertEqual(details["reason"], "not-paired")
        self.assertEqual(details["deviceId"], identity.device_id)
        self.assertEqual(details["requestedScopes"], READ_WRITE)
        code, reason = await close_code(client)
        self.assertEqual(code, 1008)
        self.assertIn("pairing required:", reason)
        self.assertIn("(requestId: %s)" % details["requestId"], reason)
        pending = self.gw.control("pending")["pending"]
        self.assertIn(details["requestId"], [p["requestId"] for p in pending])
        _, again = await self.handshake(self.gw.url, identity, **kwargs)
        self.assertEqual(again["error"]["details"]["requestId"], details["requestId"])
        self.assertTrue(self.gw.control("approve %s" % details["requestId"])["ok"])
        client, res = await self.handshake(self.gw.url, identity, **kwargs)
        self.assertTrue(res["ok"], res)
        await client.close()

    async def test_scope_upgrade_keeps_the_device_token(self):
        identity = Identity()
        _, res = await self.handshake(self.gw.url, identity, auth={"token": SHARED_TOKEN},
                                      scopes=["operator.read"])
        self.gw.control("approve %s" % res["error"]["details"]["requestId"])
        client, res = await self.handshake(self.gw.url, identity, auth={"token": SHARED_TOKEN},
                                           scopes=["operator.read"])
        token = res["payload"]["auth"]["deviceToken"]
        _, res = await self.handshake(self.gw.url, identity, auth={"token": token},
                                      scopes=READ_WRITE)
        details = res["error"]["details"]
        self.assertEqual((details["code"], details["reason"]), ("PAIRING_REQUIRED", "scope-upgrade"))
        self.assertEqual(details["approvedScopes"], ["operator.read"])
        self.gw.control("approve %s" % details["requestId"])
        client, res = await self.handshake(self.gw.url, identity, auth={"token": token},
                                           scopes=READ_WRITE)
        self.assertTrue(res["ok"], res)
        self.assertEqual(res["payload"]["auth"]["scopes"], READ_WRITE)

    async def test_rejected_and_expired_pairings_are_reported_once(self):
        for command, expected in (("reject", "PAIRING_REJECTED"), ("expire", "PAIRING_EXPIRED")):
            identity = Identity()
            _, res = await self.handshake(self.gw.url, identity, auth={"token": SHARED_TOKEN})
            first_id = res["error"]["details"]["requestId"]
            self.assertTrue(self.gw.control("%s %s" % (command, first_id))["ok"])
            _, res = await self.handshake(self.gw.url, identity, auth={"token": SHARED_TOKEN})
            self.assertEqual(error_code(res), expected)
            _, res = await self.handshake(self.gw.url, identity, auth={"token": SHARED_TOKEN})
            self.assertEqual(error_code(res), "PAIRING_REQUIRED")
            self.assertNotEqual(res["error"]["details"]["requestId"], first_id)

    async def test_operators_with_pairing_scope_see_requests_and_can_forget_devices(self):
        admin = Identity()
        _, res = await self.handshake(self.gw.url, admin, auth={"token": SHARED_TOKEN},
                                      scopes=["operator.admin"])
        self.gw.control("approve %s" % res["error"]["details"]["requestId"])
        watcher, res = await self.handshake(self.gw.url, admin, auth={"token": SHARED_TOKEN},
                                            scopes=["operator.admin"])
        self.assertTrue(res["ok"], res)
        newcomer = Identity()
        _, res = await self.handshake(self.gw.url, newcomer, auth={"token": SHARED_TOKEN})
        event = await watcher.wait_event("device.pair.requested")
        self.assertEqual(event["payload"]["deviceId"], newcomer.device_id)
        approve = await watcher.request("device.pair.approve",
                                        {"requestId": event["payload"]["requestId"]})
        self.assertTrue(approve["ok"], approve)
        devices = self.gw.control("devices")["devices"]
        self.assertIn(newcomer.device_id, [d["deviceId"] for d in devices])
        self.assertNotIn("dt_", json.dumps(devices))
        self.assertTrue(self.gw.control("forget %s" % newcomer.device_id)["forgotten"])
        _, res = await self.handshake(self.gw.url, newcomer, auth={"token": SHARED_TOKEN})
        self.assertEqual(error_code(res), "PAIRING_REQUIRED")

    async def test_setup_code_bootstrap_waits_then_hands_off_tokens_once(self):
        code = decode_setup_code(self.gw.info["setupCode"])
        self.assertEqual(code["url"], self.gw.url)
        bootstrap = code["bootstrapToken"]
        identity = Identity()
        node = {"role": "node", "scopes": [], "client_id": "node-host", "mode": "node",
                "auth": {"bootstrapToken": bootstrap}}
        _, res = await self.handshake(self.gw.url, identity, **node)
        details = res["error"]["details"]
        self.assertEqual(details["code"], "PAIRING_REQUIRED")
        self.assertEqual(details["recommendedNextStep"], "wait_then_retry")
        self.assertIs(details["retryable"], True)
        self.assertIs(details["pauseReconnect"], False)
        self.gw.control({"cmd": "approve", "requestId": details["requestId"]})
        client, res = await self.handshake(self.gw.url, identity, **node)
        self.assertTrue(res["ok"], res)
        auth = res["payload"]["auth"]
        self.assertEqual((auth["role"], auth["scopes"]), ("node", []))
        handoff = auth["deviceTokens"][0]
        self.assertEqual(handoff["role"], "operator")
        self.assertIn("operator.write", handoff["scopes"])
        await client.close()
        _, res = await self.handshake(self.gw.url, identity, **node)
        self.assertEqual(error_code(res), "AUTH_BOOTSTRAP_TOKEN_INVALID")
        client, res = await self.handshake(self.gw.url, identity, auth={"token": handoff["deviceToken"]},
                                      scopes=READ_WRITE, client_id="cli", mode="ui")
        self.assertTrue(res["ok"], res)
        await client.close()

    async def test_bootstrap_token_expires(self):
        minted = self.gw.control({"cmd": "setup-code", "ttlMs": 200})
        self.assertEqual(decode_setup_code(minted["setupCode"])["bootstrapToken"],
                         minted["bootstrapToken"])
        await asyncio.sleep(0.4)
        _, res = await self.handshake(self.gw.url, Identity(), role="node", scopes=[],
                                 client_id="node-host", mode="node",
                                 auth={"bootstrapToken": minted["bootstrapToken"]})
        self.assertEqual(error_code(res), "AUTH_BOOTSTRAP_TOKEN_INVALID")
        self.assertEqual(res["error"]["details"]["reason"], "expired")


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
            self.assertTrue(gw.control({"cmd": "restart", "downMs": 300})["ok"])
            shutdown = await client.wait_event("shutdown")
            self.assertEqual(shutdown["payload"]["restartExpectedMs"], 300)
            code, _ = await close_code(client)
            self.assertEqual(code, 1012)
            await asyncio.sleep(0.6)
            self.assertEqual(gw.control("status")["port"], gw.info["port"])
            client, res = await self.handshake(gw.url, identity, auth={"token": token},
                                          scopes=READ_WRITE)
            self.assertTrue(res["ok"], res)
            await client.close()
        finally:
            gw.stop()
        again = GatewayProcess("--token", SHARED_TOKEN, "--state-dir", state_dir.name,
                               "--port", str(gw.info["port"]))
        try:
            self.assertEqual(again.url, gw.url)
            client, res = await self.handshake(again.url, identity, auth={"token": token},
                                          scopes=READ_WRITE)
            self.assertTrue(res["ok"], res)
            await client.close()
        finally:
            again.stop()
            state_dir.cleanup()

    async def test_startup_unavailable_then_auto_approve_after_attempts(self):
        gw = GatewayProcess("--startup-unavailable", "1", "--startup-retry-after-ms", "50",
                            "--auto-approve-after-attempts", "2")
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
            gw.stop()

    async def test_drop_closes_sockets_without_a_close_frame(self):
        gw = GatewayProcess("--auto-approve")
        try:
            client, res = await self.handshake(gw.url, Identity())
            self.assertTrue(res["ok"], res)
            self.assertEqual(gw.control("drop")["dropped"], 1)
            code, _ = await close_code(client)
            self.assertIsNone(code)
        finally:
            gw.stop()


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
                   '"maxProtocol":3,"client":{"id":"test","version":"1","platform":"x","mode":"test"},'
                   '"device":{"id":1,"publicKey":[],"signature":{},"signedAt":"now","nonce":null}}}',
                   b"\xff\xfe\x00garbage", b"\x00" * 100, '{"type":"cancel","id":""}']
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
        if self.gw.info["schema"] is not None:  # without it only unparseable frames are counted
            self.assertGreaterEqual(self.gw.control("violations")["count"], len(hostile) * 5)
        else:
            print("SKIPPED: ../shared not found: violation count of hostile frames not checked")

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
            gw.stop()

    async def test_strict_mode_exits_with_status_3_after_a_violation(self):
        gw = GatewayProcess("--strict", "--auto-approve")
        if gw.info["schema"] is None:
            gw.stop()
            self.skipTest("SKIPPED: ../shared not found: strict schema exit not checked")
        client = await self.open(gw.url)
        await client.ws.send('{"type":"req","id":"1","method":"connect","params":{}}')
        await close_code(client)
        self.assertEqual(gw.stop(), 3)
        clean = GatewayProcess("--strict")
        self.assertEqual(clean.stop(), 0)

    async def test_missing_schema_is_said_plainly(self):
        gw = GatewayProcess("--schema", "/nonexistent/schema.json", "--auto-approve")
        try:
            self.assertIsNone(gw.info["schema"])
            client, res = await self.handshake(gw.url, Identity())
            self.assertTrue(res["ok"], res)
            await client.close()
        finally:
            gw.stop()
        self.assertIn("WITHOUT schema validation", gw.stderr_text())


if __name__ == "__main__":
    unittest.main()
