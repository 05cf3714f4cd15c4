"""Self-test of approvals, system.notify through node.invoke, and chat.send attachments over real sockets.

Run: python3 -m unittest discover -s tools/reference-gateway -v
"""

import asyncio
import base64
import hashlib

from minimal_client import Identity, connect_params
from refgw_harness import SHARED_TOKEN, GatewayProcess, GatewayTestCase, error_code, poll_until

APPROVER = ["operator.read", "operator.write", "operator.approvals"]


class ApprovalTests(GatewayTestCase):
    """A token-mode Gateway that approves pairings at once."""

    @classmethod
    def setUpClass(cls):
        cls.gw = GatewayProcess("--token", SHARED_TOKEN, "--auto-approve", "--quiet",
                                "--attachment-max-bytes", "300000", "--attachment-max-image-bytes", "200000")
        cls.has_schema = cls.gw.info["schema"] is not None

    @classmethod
    def tearDownClass(cls):
        cls.gw.stop()

    def tearDown(self):
        self.gw.control({"cmd": "approvals", "clear": True})
        self.gw.control("approvals-unified off")
        if self.has_schema:
            violations = self.gw.control({"cmd": "violations", "clear": True})
            self.assertEqual(violations["count"], 0, violations)
            self.assertEqual(violations["serverViolations"], [], violations)

    async def operator(self, scopes=APPROVER, caps=("exec-approvals", "plugin-approvals"), name="selftest",
                       identity=None):
        client = await self.open(self.gw.url)
        params = connect_params(identity or Identity(), client.challenge, scopes=scopes, client_id="cli", mode="cli",
                                auth={"token": SHARED_TOKEN})
        params["caps"] = list(caps)
        params["client"]["displayName"] = name
        res = await client.request("connect", params)
        self.assertTrue(res["ok"], res)
        return client, res["payload"]

    async def node(self, platform="linux", family="Linux", commands=("system.notify",)):
        identity = Identity()
        client = await self.open(self.gw.url)
        params = connect_params(identity, client.challenge, role="node", client_id="node-host", mode="node",
                                platform=platform, device_family=family, auth={"token": SHARED_TOKEN})
        params["caps"] = ["talk"]
        params["commands"] = list(commands)
        res = await client.request("connect", params)
        self.assertTrue(res["ok"], res)
        return client, identity

    def request_approval(self, **args):
        reply = self.gw.control(dict({"cmd": "approval-request", "command": "rm -rf build"}, **args))
        self.assertTrue(reply["ok"], reply)
        return reply["approval"]

    async def test_an_approval_client_hears_the_request_with_its_decisions_and_expiry(self):
        client, hello = await self.operator()
        self.assertIn("exec.approval.list", hello["features"]["methods"])
        self.assertIn("exec.approval.requested", hello["features"]["events"])
        record = self.request_approval(expiresInMs=60000)
        event = await client.wait_event("exec.approval.requested")
        payload = event["payload"]
        self.assertEqual(payload["id"], record["id"])
        self.assertEqual(payload["approvalKind"], "exec")
        self.assertEqual(payload["request"]["allowedDecisions"], ["allow-once", "allow-always", "deny"])
        self.assertEqual(payload["expiresAtMs"] - payload["createdAtMs"], 60000)
        listed = await client.request("exec.approval.list", {})
        self.assertEqual([a["id"] for a in listed["payload"]], [record["id"]])

    async def test_allowed_decisions_follow_ask_and_unavailable_decisions(self):
        once = self.request_approval(ask="always")
        self.assertEqual(once["request"]["allowedDecisions"], ["allow-once", "deny"])
        minus = self.request_approval(unavailableDecisions=["allow-always"])
        self.assertEqual(minus["request"]["allowedDecisions"], ["allow-once", "deny"])

    async def test_only_approval_clients_that_may_see_it_hear_it(self):
        mine = Identity()
        # The same device as the approver, so only the caps (gate b) or the scope (gate a) keep them out.
        plain, _ = await self.operator(caps=(), identity=mine)
        scopeless, _ = await self.operator(scopes=["operator.read", "operator.write"], identity=mine)
        other_device, _ = await self.operator()
        approver, _ = await self.operator(identity=mine)
        node, _ = await self.node()
        reply = self.gw.control({"cmd": "approval-request", "command": "ls", "reviewerDeviceIds": [mine.device_id]})
        self.assertEqual(len(reply["deliveredTo"]), 1, reply)
        await approver.wait_event("exec.approval.requested")
        for client in (plain, scopeless, other_device, node):
            with self.assertRaises(asyncio.TimeoutError):
                await client.wait_event("exec.approval.requested", timeout=0.3)
        listed = await other_device.request("exec.approval.list", {})
        self.assertEqual(listed["payload"], [])
        refused = await scopeless.request("exec.approval.list", {})
        self.assertEqual(refused["error"]["code"], "FORBIDDEN")
        self.assertEqual(refused["error"]["details"]["missingScope"], "operator.approvals")

    async def test_resolve_records_the_decision_and_tells_the_other_clients(self):
        deciding, _ = await self.operator(name="Linux Talk")
        watching, _ = await self.operator(name="Phone")
        record = self.request_approval()
        await watching.wait_event("exec.approval.requested")
        res = await deciding.request("exec.approval.resolve", {"id": record["id"][:8], "decision": "allow-once"})
        self.assertEqual(res["payload"], {"ok": True}, res)
        event = await watching.wait_event("exec.approval.resolved")
        self.assertEqual((event["payload"]["id"], event["payload"]["decision"], event["payload"]["resolvedBy"]),
                         (record["id"], "allow-once", "Linux Talk"))
        resolutions = self.gw.control("approvals")["resolutions"]
        self.assertEqual([(r["id"], r["decision"]) for r in resolutions], [(record["id"], "allow-once")])

    async def test_a_legacy_shaped_request_omits_its_decisions_and_resolve_still_enforces_them(self):
        client, _ = await self.operator()
        record = self.request_approval(ask="always", legacyShape=True)
        event = await client.wait_event("exec.approval.requested")
        self.assertNotIn("approvalKind", event["payload"])
        self.assertNotIn("allowedDecisions", event["payload"]["request"])
        listed = await client.request("exec.approval.list", {})
        self.assertNotIn("allowedDecisions", listed["payload"][0]["request"])
        refused = await client.request("exec.approval.resolve", {"id": record["id"], "decision": "allow-always"})
        self.assertEqual(refused["error"]["details"]["reason"], "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE")
        self.assertEqual(self.gw.control("approvals")["resolutions"], [])

    async def test_the_three_error_reasons_and_the_prefix_rules(self):
        client, _ = await self.operator()
        unknown = await client.request("exec.approval.resolve", {"id": "nope", "decision": "deny"})
        self.assertEqual(unknown["error"]["details"]["reason"], "APPROVAL_NOT_FOUND")
        only_once = self.request_approval(ask="always")
        refused = await client.request("exec.approval.resolve", {"id": only_once["id"], "decision": "allow-always"})
        self.assertEqual(refused["error"]["details"]["reason"], "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE")
        record = self.request_approval()
        self.gw.control({"cmd": "approval-resolve", "id": record["id"], "decision": "deny", "resolvedBy": "Phone"})
        again = await client.request("exec.approval.resolve", {"id": record["id"], "decision": "allow-once"})
        self.assertEqual(again["error"]["details"]["reason"], "APPROVAL_ALREADY_RESOLVED")
        same = await client.request("exec.approval.resolve", {"id": record["id"], "decision": "deny"})
        self.assertTrue(same["ok"], same)
        self.request_approval(id="abc-1")
        self.request_approval(id="abc-2")
        ambiguous = await client.request("exec.approval.resolve", {"id": "abc", "decision": "deny"})
        self.assertIn("ambiguous", ambiguous["error"]["message"])
        bad = await client.request("exec.approval.resolve", {"id": "abc-1", "decision": "maybe"})
        self.assertEqual(bad["error"]["message"], "invalid decision")

    async def test_an_approval_resolved_elsewhere_reaches_the_client(self):
        client, _ = await self.operator()
        record = self.request_approval(kind="plugin", command="Post to the channel")
        requested = await client.wait_event("plugin.approval.requested")
        self.assertTrue(requested["payload"]["id"].startswith("plugin:"))
        self.gw.control({"cmd": "approval-resolve", "id": record["id"], "decision": "deny", "resolvedBy": "Phone"})
        event = await client.wait_event("plugin.approval.resolved")
        self.assertEqual((event["payload"]["decision"], event["payload"]["resolvedBy"]), ("deny", "Phone"))

    async def test_an_expired_approval_is_dropped_without_an_event(self):
        client, _ = await self.operator()
        record = self.request_approval(expiresInMs=300)

        def gone():
            listed = self.gw.control("approvals")["approvals"]
            return [a["status"] for a in listed] == ["expired"]
        await poll_until(gone, "the approval expired")
        listed = await client.request("exec.approval.list", {})
        self.assertEqual(listed["payload"], [])
        res = await client.request("exec.approval.resolve", {"id": record["id"], "decision": "deny"})
        self.assertEqual(res["error"]["details"]["reason"], "APPROVAL_NOT_FOUND")
        with self.assertRaises(asyncio.TimeoutError):
            await client.wait_event("exec.approval.resolved", timeout=0.3)

    async def test_unified_methods_only_behind_the_flag(self):
        client, hello = await self.operator()
        self.assertNotIn("approval.resolve", hello["features"]["methods"])
        hidden = await client.request("approval.resolve", {"id": "x", "kind": "exec", "decision": "deny"})
        self.assertIn("unknown method", hidden["error"]["message"])
        self.gw.control("approvals-unified on")
        client, hello = await self.operator()
        self.assertIn("approval.resolve", hello["features"]["methods"])
        record = self.request_approval()
        res = await client.request("approval.resolve", {"id": record["id"], "kind": "exec", "decision": "deny"})
        self.assertEqual((res["payload"]["applied"], res["payload"]["approval"]["status"]), (True, "denied"), res)
        got = await client.request("approval.get", {"id": record["id"]})
        self.assertEqual(got["payload"]["approval"]["decision"], "deny")

    async def test_system_notify_reaches_a_linux_node_only(self):
        operator, _ = await self.operator()
        node, identity = await self.node()

        async def answer():
            event = await node.wait_event("node.invoke.request")
            payload = event["payload"]
            self.assertEqual(payload["command"], "system.notify")
            await node.request("node.invoke.result", {"id": payload["id"], "nodeId": payload["nodeId"], "ok": True,
                                                      "payloadJSON": '{"ok":true}'})
        answering = asyncio.ensure_future(answer())
        res = await operator.request("node.invoke", {"nodeId": identity.device_id, "command": "system.notify",
                                                     "params": {"title": "Build", "body": "Done"},
                                                     "idempotencyKey": "k-1"}, timeout=10)
        await answering
        self.assertEqual((res["payload"]["payload"], res["payload"]["payloadJSON"]), ({"ok": True}, '{"ok":true}'))
        other, other_identity = await self.node(platform="Linux ", family="Desktop")
        refused = await operator.request("node.invoke", {"nodeId": other_identity.device_id,
                                                         "command": "system.notify", "params": {"title": "x"},
                                                         "idempotencyKey": "k-2"})
        self.assertIn("not allowed", refused["error"]["message"])

    async def test_chat_send_attachments_are_checked_against_the_policy(self):
        client, hello = await self.operator()
        self.assertEqual(hello["policy"]["attachments"], {"maxBytes": 300000, "maxImageBytes": 200000})
        image = bytes(range(256)) * 100
        ok = await client.request("chat.send", {
            "sessionKey": "main", "message": "what is this", "idempotencyKey": "att-1",
            "attachments": [{"type": "image", "mimeType": "image/png", "fileName": "a.png",
                             "content": base64.b64encode(image).decode()}]})
        self.assertTrue(ok["ok"], ok)
        transcript = self.gw.control("chat-transcripts")["transcripts"][-1]
        self.assertEqual(transcript["attachments"][0]["sha256"], hashlib.sha256(image).hexdigest())
        big = await client.request("chat.send", {
            "sessionKey": "main", "message": "too big", "idempotencyKey": "att-2",
            "attachments": [{"type": "image", "mimeType": "image/png", "fileName": "b.png",
                             "content": base64.b64encode(bytes(200001)).decode()}]})
        self.assertEqual(big["error"]["details"]["reason"], "ATTACHMENT_TOO_LARGE")
        garbage = await client.request("chat.send", {
            "sessionKey": "main", "message": "bad", "idempotencyKey": "att-3",
            "attachments": [{"type": "file", "mimeType": "text/plain", "fileName": "c.txt", "content": "@@@"}]})
        self.assertFalse(garbage["ok"])
        messages = [t["message"] for t in self.gw.control("chat-transcripts")["transcripts"]]
        self.assertNotIn("too big", messages)
        self.assertNotIn("bad", messages)
