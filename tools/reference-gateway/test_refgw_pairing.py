"""Self-test of the reference Gateway's pairing: pending requests, setup-code profiles, handoff, node-first order.

Run: python3 -m unittest discover -s tools/reference-gateway -v
"""

import asyncio
import json
import tempfile
import unittest

from refgw_harness import (READ_WRITE, SHARED_TOKEN, GatewayProcess, GatewayTestCase, close_code,
                           decode_setup_code, error_code)
from minimal_client import Identity


class PairingTests(GatewayTestCase):
    """A Gateway acting as a remote one (--remote): pairings stay pending; a setup code and a state directory."""

    @classmethod
    def setUpClass(cls):
        cls.state_dir = tempfile.TemporaryDirectory(prefix="refgw-state-")
        cls.gw = GatewayProcess("--token", SHARED_TOKEN, "--print-setup-code", "--state-dir",
                                cls.state_dir.name, "--tick-interval-ms", "300", "--remote")

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
        self.assertEqual((details["code"], details["reason"]),
                         ("PAIRING_REQUIRED", "scope-upgrade"))
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

    def node(self, bootstrap, client_id="node-host", platform="linux", family="Linux"):
        return {"role": "node", "scopes": [], "client_id": client_id, "mode": "node", "platform": platform,
                "device_family": family, "auth": {"bootstrapToken": bootstrap}}

    def operator(self, bootstrap):
        return {"role": "operator", "scopes": READ_WRITE, "client_id": "cli", "mode": "cli", "platform": "linux",
                "device_family": "Linux", "auth": {"bootstrapToken": bootstrap}}

    async def test_a_linux_node_host_gets_no_handoff_and_pairs_each_role_node_first(self):
        """A full or limited code (device-bootstrap-profile.ts) on a Linux node-host: no silent handoff
        (connect-device-metadata.ts), the operator waits for the node, then asks a role upgrade of its own."""
        for profile in ("full", "limited"):
            with self.subTest(profile=profile):
                bootstrap = self.gw.control({"cmd": "setup-code", "profile": profile})["bootstrapToken"]
                identity = Identity()
                _, res = await self.handshake(self.gw.url, identity, **self.node(bootstrap))
                node_request = res["error"]["details"]
                self.assertEqual((res["error"]["code"], node_request["code"], node_request["reason"]),
                                 ("NOT_PAIRED", "PAIRING_REQUIRED", "not-paired"))
                self.assertEqual(res["error"]["message"], "pairing required: device is not approved yet")
                self.assertEqual((node_request["recommendedNextStep"], node_request["retryable"],
                                  node_request["pauseReconnect"]), ("wait_then_retry", True, False))
                # The operator's bootstrap connect is held while the node's request waits: no request of its own.
                _, res = await self.handshake(self.gw.url, identity, **self.operator(bootstrap))
                held = res["error"]["details"]
                self.assertEqual((held["code"], held["requestId"], held["requestedRole"]),
                                 ("PAIRING_REQUIRED", node_request["requestId"], "operator"))
                self.assertEqual([p["requestId"] for p in self.gw.control("pending")["pending"]
                                  if p["deviceId"] == identity.device_id], [node_request["requestId"]])
                self.gw.control({"cmd": "approve", "requestId": node_request["requestId"]})
                client, res = await self.handshake(self.gw.url, identity, **self.node(bootstrap))
                self.assertTrue(res["ok"], res)
                auth = res["payload"]["auth"]
                self.assertEqual((auth["role"], auth["scopes"]), ("node", []))
                self.assertNotIn("deviceTokens", auth, "no operator token is handed to a Linux node-host")
                await client.close()
                # The same code still works for the operator (not every role redeemed): a role upgrade.
                _, res = await self.handshake(self.gw.url, identity, **self.operator(bootstrap))
                upgrade = res["error"]["details"]
                self.assertEqual((upgrade["reason"], upgrade["approvedRoles"]), ("role-upgrade", ["node"]))
                self.assertNotEqual(upgrade["requestId"], node_request["requestId"])
                self.assertNotIn("pauseReconnect", upgrade)
                self.gw.control({"cmd": "approve", "requestId": upgrade["requestId"]})
                client, res = await self.handshake(self.gw.url, identity, **self.operator(bootstrap))
                self.assertTrue(res["ok"], res)
                self.assertEqual((res["payload"]["auth"]["role"], res["payload"]["auth"]["scopes"]),
                                 ("operator", READ_WRITE))
                await client.close()
                # Both roles redeemed: the code is spent.
                _, res = await self.handshake(self.gw.url, identity, **self.node(bootstrap))
                self.assertEqual(error_code(res), "AUTH_BOOTSTRAP_TOKEN_INVALID")

    async def test_both_roles_at_once_share_one_merged_request_when_the_order_is_free(self):
        gw = GatewayProcess("--remote", "--bootstrap-order", "any", "--print-setup-code")
        try:
            bootstrap = gw.info["bootstrapToken"]
            identity = Identity()
            _, res = await self.handshake(gw.url, identity, **self.node(bootstrap))
            first = res["error"]["details"]["requestId"]
            _, res = await self.handshake(gw.url, identity, **self.operator(bootstrap))
            merged = res["error"]["details"]["requestId"]
            self.assertNotEqual(merged, first, "a new role supersedes the request with a new id")
            _, res = await self.handshake(gw.url, identity, **self.node(bootstrap))
            self.assertEqual(res["error"]["details"]["requestId"], merged, "the node's retry is covered by it")
            pending = gw.control("pending")["pending"]
            self.assertEqual([(p["requestId"], p["roles"]) for p in pending], [(merged, ["node", "operator"])])
            gw.control({"cmd": "approve", "requestId": merged})
            for kwargs in (self.node(bootstrap), self.operator(bootstrap)):
                client, res = await self.handshake(gw.url, identity, **kwargs)
                self.assertTrue(res["ok"], res)
                await client.close()
        finally:
            await self.stop(gw)

    async def test_loopback_connects_are_approved_silently_unless_remote(self):
        """As upstream (handshake-auth-helpers.ts): loopback is local, so no owner approval is asked."""
        gw = GatewayProcess("--print-setup-code")
        try:
            bootstrap = gw.info["bootstrapToken"]
            identity = Identity()
            for kwargs in (self.node(bootstrap), self.operator(bootstrap)):
                client, res = await self.handshake(gw.url, identity, **kwargs)
                self.assertTrue(res["ok"], res)
                await client.close()
            self.assertEqual(gw.control("pending")["pending"], [])
        finally:
            await self.stop(gw)

    async def test_a_node_only_code_pairs_a_node_host_silently_and_gives_no_operator(self):
        bootstrap = self.gw.control({"cmd": "setup-code", "profile": "node"})["bootstrapToken"]
        identity = Identity()
        _, res = await self.handshake(self.gw.url, identity, **self.operator(bootstrap))
        self.assertEqual(error_code(res), "AUTH_BOOTSTRAP_TOKEN_INVALID")
        self.assertEqual(res["error"]["details"]["reason"], "role-not-in-profile")
        client, res = await self.handshake(self.gw.url, identity, **self.node(bootstrap))
        self.assertTrue(res["ok"], "a node-host with a node-only code is the handoff case: %s" % res)
        self.assertEqual([t["role"] for t in res["payload"]["auth"]["deviceTokens"]], ["node"])
        node_token = res["payload"]["auth"]["deviceToken"]
        await client.close()
        _, res = await self.handshake(self.gw.url, identity, **self.node(bootstrap))
        self.assertEqual(error_code(res), "AUTH_BOOTSTRAP_TOKEN_INVALID", "revoked after the handoff")
        # A node token is no operator credential; the shared token asks a role upgrade.
        op = {"role": "operator", "scopes": READ_WRITE, "client_id": "cli", "mode": "cli"}
        _, res = await self.handshake(self.gw.url, identity, auth={"deviceToken": node_token}, **op)
        self.assertEqual(error_code(res), "AUTH_DEVICE_TOKEN_MISMATCH")
        _, res = await self.handshake(self.gw.url, identity, auth={"token": SHARED_TOKEN}, **op)
        self.assertEqual(res["error"]["details"]["reason"], "role-upgrade")

    async def test_a_mobile_app_with_a_full_code_gets_the_operator_token_handed_off(self):
        bootstrap = self.gw.control({"cmd": "setup-code", "profile": "full"})["bootstrapToken"]
        client, res = await self.handshake(self.gw.url, Identity(), **self.node(
            bootstrap, client_id="openclaw-ios", platform="iOS 18.2", family="iPhone"))
        self.assertTrue(res["ok"], res)
        handed = {t["role"]: t["scopes"] for t in res["payload"]["auth"]["deviceTokens"]}
        self.assertEqual(handed["node"], [])
        self.assertIn("operator.admin", handed["operator"])
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


if __name__ == "__main__":
    unittest.main()
