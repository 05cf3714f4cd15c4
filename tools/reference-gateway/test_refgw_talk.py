"""Self-test of the Gateway's voices, Talk phases, wake words and node commands over real sockets.

Run: python3 -m unittest discover -s tools/reference-gateway -v
"""

import asyncio
import base64
import io
import json
import shutil
import unittest
import wave

from refgw_harness import READ_WRITE, SHARED_TOKEN, GatewayProcess, GatewayTestCase, require_schema
from minimal_client import Identity
from shared_dir import is_ci

TALK_COMMANDS = ["talk.ptt.start", "talk.ptt.stop", "talk.ptt.cancel", "talk.ptt.once"]
TOOLS = ("espeak-ng", "sox", "opusenc", "lame")


class TalkVoiceTests(GatewayTestCase):
    """A token-mode Gateway that approves pairings at once."""

    @classmethod
    def setUpClass(cls):
        cls.gw = GatewayProcess("--token", SHARED_TOKEN, "--auto-approve", "--quiet")
        cls.has_schema = cls.gw.info["schema"] is not None

    @classmethod
    def tearDownClass(cls):
        cls.gw.stop()

    def tearDown(self):
        self.gw.control("talk-speak pcm_24000")
        self.gw.control("show-method talk.speak")
        if self.has_schema:
            violations = self.gw.control({"cmd": "violations", "clear": True})
            self.assertEqual(violations["count"], 0, violations)
            self.assertEqual(violations["serverViolations"], [], violations)

    async def operator(self, scopes=READ_WRITE):
        client, res = await self.handshake(self.gw.url, Identity(), auth={"token": SHARED_TOKEN},
                                           scopes=scopes, client_id="cli", mode="cli")
        self.assertTrue(res["ok"], res)
        return client, res["payload"]

    async def node(self, identity=None, commands=TALK_COMMANDS):
        identity = identity or Identity()
        client = await self.open(self.gw.url)
        from minimal_client import connect_params
        params = connect_params(identity, client.challenge, role="node", client_id="node-host",
                                mode="node", auth={"token": SHARED_TOKEN})
        params["caps"] = ["talk", "voiceWake"]
        params["commands"] = list(commands)
        res = await client.request("connect", params)
        self.assertTrue(res["ok"], res)
        return client, identity

    @unittest.skipUnless(is_ci() or all(shutil.which(t) for t in TOOLS),
                         "espeak-ng, sox, opusenc and lame (scripts/install-deps.sh) make the clips")
    async def test_talk_speak_makes_each_format_from_the_text(self):
        client, _ = await self.operator()
        for fmt, magic in (("pcm_24000", None), ("pcm_44100", None), ("opus", b"OggS"),
                           ("wav", b"RIFF"), ("mp3", None)):
            self.gw.control("talk-speak " + fmt)
            res = await client.request("talk.speak", {"text": "four two"}, timeout=30)
            self.assertTrue(res["ok"], res)
            audio = base64.b64decode(res["payload"]["audioBase64"])
            log = self.gw.control({"cmd": "speak-log", "clear": True})["speaks"][-1]
            self.assertEqual((log["format"], log["text"]), (fmt, "four two"))
            if magic:
                self.assertEqual(audio[:4], magic, fmt)
            if fmt.startswith("pcm_"):
                rate = int(fmt[4:])
                self.assertAlmostEqual(len(audio) / 2 / rate * 1000, log["durationMs"], delta=5)
            if fmt == "wav":
                with wave.open(io.BytesIO(audio)) as handle:
                    self.assertEqual(handle.getnchannels(), 1)
            if fmt == "mp3":
                self.assertTrue(audio[:3] == b"ID3" or audio[0] == 0xFF, audio[:4])
                self.assertEqual(res["payload"]["mimeType"], "audio/mpeg")

    async def test_unavailable_says_whether_a_local_voice_may_stand_in(self):
        client, _ = await self.operator()
        for reason, eligible in (("talk_unconfigured", True), ("synthesis_failed", False)):
            self.gw.control({"cmd": "talk-speak", "unavailable": reason})
            res = await client.request("talk.speak", {"text": "hi"})
            self.assertEqual(res["error"]["code"], "UNAVAILABLE")
            self.assertEqual(res["error"]["details"],
                             {"reason": reason, "fallbackEligible": eligible})

    async def test_a_raw_payload_is_returned_as_is(self):
        client, _ = await self.operator()
        self.gw.control({"cmd": "talk-speak", "payload": {"audioBase64": "%%%", "provider": 7}})
        res = await client.request("talk.speak", {"text": "hi"})
        self.assertEqual(res["payload"], {"audioBase64": "%%%", "provider": 7})

    async def test_hiding_talk_speak_leaves_tts_speak(self):
        self.gw.control("hide-method talk.speak")
        client, hello = await self.operator()
        self.assertNotIn("talk.speak", hello["features"]["methods"])
        self.assertIn("tts.speak", hello["features"]["methods"])
        res = await client.request("talk.speak", {"text": "hi"})
        self.assertEqual(res["error"]["code"], "INVALID_REQUEST")
        self.gw.control({"cmd": "talk-speak", "unavailable": "talk_unconfigured"})
        res = await client.request("tts.speak", {"text": "hi"})
        self.assertEqual(res["error"]["code"], "UNAVAILABLE")
        self.assertEqual(self.gw.control({"cmd": "speak-log", "clear": True})["speaks"][-1]["method"], "tts.speak")

    async def test_talk_mode_needs_a_talk_node_and_is_broadcast(self):
        client, _ = await self.operator()
        res = await client.request("talk.mode", {"enabled": True, "phase": "listening"})
        self.assertEqual(res["error"]["code"], "UNAVAILABLE")
        await self.node()
        res = await client.request("talk.mode", {"enabled": True, "phase": "thinking"})
        self.assertTrue(res["ok"], res)
        event = await client.wait_event("talk.mode")
        self.assertEqual((event["payload"]["enabled"], event["payload"]["phase"]), (True, "thinking"))
        phases = [m["phase"] for m in self.gw.control({"cmd": "talk-modes", "clear": True})["modes"]]
        self.assertEqual(phases, ["listening", "thinking"])

    async def test_wake_phrases_are_read_set_and_announced(self):
        client, _ = await self.operator()
        node, _ = await self.node()
        # Pushed to a node right after hello-ok (docs nodes/voicewake.md); voicewake.get is for operators only.
        event = await node.wait_event("voicewake.changed")
        self.assertEqual(event["payload"], {"triggers": ["openclaw", "claude", "computer"]})
        res = await node.request("voicewake.get", {})
        self.assertEqual((res["error"]["code"], res["error"]["message"]), ("INVALID_REQUEST", "unauthorized role: node"))
        res = await client.request("voicewake.get", {})
        self.assertEqual(res["payload"], {"triggers": ["openclaw", "claude", "computer"]})
        self.gw.control({"cmd": "voicewake-set", "triggers": [" hey talk ", "", "computer"]})
        event = await node.wait_event("voicewake.changed")
        self.assertEqual(event["payload"], {"triggers": ["hey talk", "computer"]})
        res = await client.request("voicewake.set", {"triggers": []})
        self.assertEqual(res["payload"]["triggers"], ["openclaw", "claude", "computer"])

    async def test_node_invoke_goes_to_the_node_and_back(self):
        client, _ = await self.operator()
        node, identity = await self.node(commands=["talk.ptt.start"])

        async def answer():
            event = await node.wait_event("node.invoke.request")
            request = event["payload"]
            self.assertEqual(json.loads(request["paramsJSON"]), {"x": 1})
            res = await node.request("node.invoke.result", {
                "id": request["id"], "nodeId": request["nodeId"], "ok": True,
                "payloadJSON": json.dumps({"captureId": "c1"})})
            self.assertTrue(res["ok"], res)
        answering = asyncio.create_task(answer())
        res = await client.request("node.invoke", {
            "nodeId": identity.device_id, "command": "talk.ptt.start", "params": {"x": 1},
            "idempotencyKey": "k1"}, timeout=10)
        await answering
        self.assertTrue(res["ok"], res)
        self.assertEqual(res["payload"]["payload"], {"captureId": "c1"})
        res = await client.request("node.invoke", {
            "nodeId": identity.device_id, "command": "talk.ptt.stop", "idempotencyKey": "k2"})
        self.assertEqual(res["error"]["code"], "INVALID_REQUEST")

    async def test_the_control_command_invokes_and_reports_node_errors(self):
        node, _ = await self.node()

        async def answer():
            event = await node.wait_event("node.invoke.request")
            await node.request("node.invoke.result", {
                "id": event["payload"]["id"], "nodeId": event["payload"]["nodeId"], "ok": False,
                "error": {"code": "INVALID_REQUEST", "message": "unknown command"}})
        answering = asyncio.create_task(answer())
        reply = await asyncio.to_thread(self.gw.control, {
            "cmd": "node-invoke", "command": "camera.snap", "force": True})
        await answering
        self.assertFalse(reply["result"]["ok"])
        self.assertEqual(reply["result"]["error"]["message"], "unknown command")
        refused = await asyncio.to_thread(self.gw.control, {"cmd": "node-invoke",
                                                            "command": "camera.snap"})
        self.assertFalse(refused["ok"])

    async def test_presence_lists_the_node_and_beacons_refresh_it(self):
        client, _ = await self.operator()
        node, identity = await self.node()
        res = await client.request("system-presence", {})
        entry = [e for e in res["payload"] if e.get("deviceId") == identity.device_id][0]
        self.assertEqual(entry["roles"], ["node"])
        res = await node.request("node.event", {"event": "node.presence.alive",
                                                "payloadJSON": json.dumps({"trigger": "manual"})})
        self.assertEqual(res["payload"], {"ok": True, "event": "node.presence.alive",
                                          "handled": True})
        beacons = self.gw.control("presence-beacons")["beacons"]
        self.assertEqual(beacons[-1]["payload"], {"trigger": "manual"})
        require_schema(self, self.gw.info, "the beacon payload check")
        if self.has_schema:
            res = await node.request("node.event", {"event": "node.presence.alive",
                                                    "payload": {"trigger": "whenever"}})
            self.assertFalse(res["payload"]["handled"])
            self.assertEqual(self.gw.control({"cmd": "violations", "clear": True})["count"], 1)


if __name__ == "__main__":
    unittest.main()
