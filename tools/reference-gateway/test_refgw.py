"""Self-test of the reference Gateway: handshake, proofs, auth and pairing over real sockets.

Run: python3 -m unittest discover -s tools/reference-gateway -v
"""

import asyncio
import json
import tempfile
import time
import unittest

from refgw_harness import (READ_WRITE, SHARED_TOKEN, GatewayProcess, GatewayTestCase, close_code,
                           decode_setup_code, error_code, poll_until, require_schema)
from minimal_client import Identity, connect_params


class HandshakeTests(GatewayTestCase):
    """A token-mode Gateway that approves pairings at once."""

    @classmethod
    def setUpClass(cls):
        cls.gw = GatewayProcess("--token", SHARED_TOKEN, "--auto-approve",
                                "--tick-interval-ms", "300")

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
                 ({"nonce": "some-other-nonce"}, "DEVICE_AUTH_NONCE_MISMATCH"),
                 ({"public_key": "padded"}, "DEVICE_AUTH_PUBLIC_KEY_INVALID")]
        for tamper, expected in cases:
            with self.subTest(expected=expected):
                client, res = await self.connect(**tamper)
                self.assertFalse(res["ok"])
                self.assertEqual(error_code(res), expected)
                code, _ = await close_code(client)
                self.assertEqual(code, 1008)

    async def test_a_missing_nonce_is_a_schema_violation_with_the_device_code(self):
        require_schema(self, self.gw.info, "schema validation")
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
        require_schema(self, self.gw.info, "schema validation")
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
        def kinds():
            return [v["kind"] for v in self.gw.control("violations")["violations"]]
        await poll_until(lambda: "oversized" in kinds(), "the oversized frame recorded")

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


if __name__ == "__main__":
    unittest.main()
