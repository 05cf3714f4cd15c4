"""Self-test of the realtime relay: turns answered in audio, marks, cancel, and its two tools (consult, control).

Run: python3 -m unittest test_refgw_realtime (from tools/reference-gateway)
"""

import asyncio
import unittest

from test_refgw_relay import RelayTestCase, encode, speech_16k


class RealtimeRelayTests(RelayTestCase):
    async def _turn(self, client, create="talk.session.create", append="talk.session.appendAudio",
                    key="sessionId"):
        params = {"mode": "realtime", "transport": "gateway-relay", "brain": "agent-consult"} \
            if create == "talk.session.create" else {}
        created = await client.request(create, params)
        self.assertTrue(created["ok"], created)
        sid = created["payload"].get("sessionId") or created["payload"]["relaySessionId"]
        self.assertEqual(created["payload"]["audio"]["inputEncoding"], "pcm16")
        self.gw.control({"cmd": "talk-uplink", "realtime": "pcm16/16000"})
        return sid

    async def _answered(self, relay=None):
        """A realtime turn: the relay answers "hello there" at a 0.1 pace (with `relay`'s settings on top); returns the
        client, the session and every relay event through the answer's audioDone."""
        self.gw.control({"cmd": "talk-uplink", "realtime": "pcm16/16000"})
        self.gw.control({"cmd": "talk-relay", "texts": ["hello there"], "audioPace": 0.1, **(relay or {})})
        client, _ = await self.operator()
        sid = await self._turn(client)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        return client, sid, await self.events_until(client, lambda p: p["type"] == "audioDone", timeout=20)

    async def test_create_takes_talk_realtime_choices(self):
        client, _ = await self.operator()
        config = (await client.request("talk.config", {}))["payload"]["config"]["talk"]
        self.assertEqual(config["realtime"]["provider"], "refgw")
        base = {"mode": "realtime", "transport": "gateway-relay", "brain": "agent-consult"}
        asked = await client.request("talk.session.create", dict(base, provider="refgw", model="m-2",
                                                                 voice="v-2"))
        self.assertTrue(asked["ok"], asked)
        plain = await client.request("talk.session.create", base)
        self.assertTrue(plain["ok"], plain)
        created = [e for e in self.gw.control({"cmd": "relay-log"})["log"] if e["kind"] == "created"]
        self.assertEqual([(e["model"], e["voice"], e["requested"]) for e in created],
                         [("m-2", "v-2", {"provider": "refgw", "model": "m-2", "voice": "v-2"}),
                          ("refgw-realtime-1", "refgw-marin", {})])
        other = await client.request("talk.session.create", dict(base, provider="openai"))
        self.assertEqual(other["error"]["code"], "UNAVAILABLE")

    async def test_each_audio_chunk_is_followed_by_a_mark_to_acknowledge_once_played(self):
        """Upstream's relay forwards the provider's playback marks (markStrategy "transport"): one behind each audio
        chunk, none after audioDone; each acknowledged (in playback order) clears it and those before it."""
        client, sid, seen = await self._answered()
        user = [p for p in seen if p["type"] == "transcript" and p["role"] == "user" and p["final"]]
        self.assertEqual(user[0]["text"], "hello there")
        output = [p for p in seen if p["type"] in ("audio", "mark")]
        audio = [p for p in output if p["type"] == "audio"]
        self.assertGreater(len(audio), 3)
        self.assertEqual(len({p["talkEvent"]["turnId"] for p in output}), 1)
        self.assertEqual([p["type"] for p in output], ["audio", "mark"] * len(audio))
        marks = [p["markName"] for p in output if p["type"] == "mark"]
        self.assertEqual(len(set(marks)), len(marks))
        self.assertEqual({(p["talkEvent"]["type"], p["talkEvent"]["final"]) for p in output if p["type"] == "mark"},
                         {("output.audio.done", True)})
        with self.assertRaises(asyncio.TimeoutError):   # the answer's end is its audioDone; no mark follows
            await self.events_until(client, lambda p: p["type"] == "mark", timeout=0.5)
        for name in (marks[len(marks) // 2], marks[-1], "audio-unknown"):
            res = await client.request("talk.session.acknowledgeMark", {"sessionId": sid, "markName": name})
            self.assertTrue(res["ok"], res)
        acks = [(e["markName"], e["outstanding"], e["pending"])
                for e in self.gw.control({"cmd": "relay-log"})["log"] if e["kind"] == "mark-ack"]
        self.assertEqual(acks, [(marks[len(marks) // 2], True, len(marks) - len(marks) // 2 - 1),
                                (marks[-1], True, 0), ("audio-unknown", False, 0)])
        answered = next(e for e in self.gw.control({"cmd": "relay-log"})["log"] if e["kind"] == "answered")
        self.assertEqual(answered["marks"], len(marks))

    async def test_marks_left_unacknowledged_are_still_pending_at_close(self):
        client, sid, seen = await self._answered()
        self.assertTrue((await client.request("talk.session.close", {"sessionId": sid}))["ok"])
        closed = next(e for e in self.gw.control({"cmd": "relay-log"})["log"] if e["kind"] == "closed")
        self.assertEqual(closed["marksPending"], len([p for p in seen if p["type"] == "mark"]))

    async def test_ack_immediately_sends_no_marks(self):
        """The relay as created before (talk-realtime-relay.ts @0a44de75) acknowledged the provider's marks itself."""
        client, sid, seen = await self._answered({"markStrategy": "ack-immediately"})
        self.assertNotIn("mark", [p["type"] for p in seen])
        with self.assertRaises(asyncio.TimeoutError):
            await self.events_until(client, lambda p: p["type"] == "mark", timeout=0.5)
        answered = next(e for e in self.gw.control({"cmd": "relay-log"})["log"] if e["kind"] == "answered")
        self.assertEqual(answered["marks"], len([p for p in seen if p["type"] == "audio"]))
        self.assertIn("markStrategy is one of", str(self.gw.control({"cmd": "talk-relay", "markStrategy": "never"})))

    async def test_acknowledge_mark_is_refused_for_a_transcription_session(self):
        client, _ = await self.operator()
        created = await client.request("talk.session.create", {"mode": "transcription", "transport": "gateway-relay",
                                                               "brain": "none"})
        sid = created["payload"]["sessionId"]
        res = await client.request("talk.session.acknowledgeMark", {"sessionId": sid, "markName": "audio-1"})
        self.assertEqual(res["error"]["code"], "INVALID_REQUEST")

    async def test_audio_gap_holds_the_rest_of_the_answer_back(self):
        client, sid, seen = await self._answered({"audioGapMs": 400})
        sent = [p["talkEvent"]["timestamp"] for p in seen if p["type"] == "audio"]
        self.assertGreater(len(sent), 3)
        # The first chunk, 400 ms of nothing (and its 10 ms pace), then the rest at the pace, then audioDone.
        self.assertGreaterEqual(sent[1] - sent[0], 410)
        self.assertLess(max(b - a for a, b in zip(sent[1:], sent[2:])), 400)
        self.assertEqual([p["type"] for p in seen[-3:]], ["audio", "mark", "audioDone"])

    async def test_cancel_output_clears_and_stops_the_turn(self):
        self.gw.control({"cmd": "talk-uplink", "realtime": "pcm16/16000"})
        self.gw.control({"cmd": "talk-relay", "texts": ["x"], "audioPace": 1.0,
                         "reply": "a long answer that takes a good few seconds to say out loud"})
        client, _ = await self.operator()
        sid = await self._turn(client)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        seen = await self.events_until(client, lambda p: p["type"] == "audio", timeout=20)
        turn_id = seen[-1]["talkEvent"]["turnId"]
        res = await client.request("talk.session.cancelOutput", {"sessionId": sid, "turnId": turn_id,
                                                                 "reason": "barge-in"})
        self.assertEqual(res["payload"]["status"], "applied")
        after = await self.events_until(client, lambda p: p["type"] == "clear")
        await asyncio.sleep(0.4)
        with self.assertRaises(asyncio.TimeoutError):
            await self.events_until(client, lambda p: p["type"] in ("audio", "mark"), timeout=0.5)
        self.assertEqual(after[-1]["talkEvent"]["turnId"], turn_id)

    async def test_tool_call_consult(self):
        self.gw.control({"cmd": "talk-uplink", "realtime": "pcm16/16000"})
        self.gw.control({"cmd": "talk-relay", "texts": ["what time is it"], "audioPace": 0.1,
                         "toolCall": {"name": "openclaw_agent_consult", "args": {"question": "time?"}}})
        client, _ = await self.operator()
        sid = await self._turn(client)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        seen = await self.events_until(client, lambda p: p["type"] == "toolCall", timeout=20)
        call = seen[-1]
        consult = await client.request("talk.client.toolCall", {
            "sessionKey": "agent:main:main", "callId": call["callId"], "name": call["name"],
            "args": call["args"], "relaySessionId": sid})
        run_id = consult["payload"]["runId"]
        while True:
            frame = await client.wait_event("chat")
            if frame["payload"]["runId"] == run_id and frame["payload"]["state"] == "final":
                break
        res = await client.request("talk.session.submitToolResult", {
            "sessionId": sid, "callId": call["callId"], "result": {"text": "it is noon"}})
        self.assertTrue(res["ok"], res)
        seen = await self.events_until(client, lambda p: p["type"] == "audioDone", timeout=20)
        spoken = [p["text"] for p in seen if p["type"] == "transcript" and p["role"] == "assistant"]
        self.assertEqual(spoken, ["it is noon"])

    async def test_tool_call_control_goes_through_steer(self):
        self.gw.control({"cmd": "talk-uplink", "realtime": "pcm16/16000"})
        self.gw.control({"cmd": "talk-relay", "texts": ["are you still on it"], "audioPace": 0.1,
                         "toolCall": {"name": "openclaw_agent_control", "args": {"mode": "status", "text": "status"}}})
        client, _ = await self.operator()
        sid = await self._turn(client)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        call = (await self.events_until(client, lambda p: p["type"] == "toolCall", timeout=20))[-1]
        self.assertEqual(call["name"], "openclaw_agent_control")
        steered = await client.request("talk.session.steer", {"sessionId": sid, "sessionKey": "agent:main:main",
                                                              "text": "status", "mode": "status"})
        self.assertEqual(steered["payload"], {"ok": True, "mode": "status", "sessionKey": "agent:main:main",
                                              "active": False, "message": "No run is active."})
        res = await client.request("talk.session.submitToolResult", {
            "sessionId": sid, "callId": call["callId"], "result": steered["payload"]})
        self.assertTrue(res["ok"], res)
        seen = await self.events_until(client, lambda p: p["type"] == "audioDone", timeout=20)
        spoken = [p["text"] for p in seen if p["type"] == "transcript" and p["role"] == "assistant"]
        self.assertEqual(spoken, ["No run is active."])
        self.assertEqual([e["mode"] for e in self.gw.control({"cmd": "relay-log"})["log"] if e["kind"] == "steer"],
                         ["status"])

    async def test_a_control_result_without_steer_is_a_violation(self):
        self.gw.control({"cmd": "talk-uplink", "realtime": "pcm16/16000"})
        self.gw.control({"cmd": "talk-relay", "texts": ["stop that"], "audioPace": 0.1,
                         "toolCall": {"name": "openclaw_agent_control", "args": {"mode": "cancel", "text": "stop"}}})
        client, _ = await self.operator()
        sid = await self._turn(client)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        call = (await self.events_until(client, lambda p: p["type"] == "toolCall", timeout=20))[-1]
        await client.request("talk.client.toolCall", {"sessionKey": "main", "callId": call["callId"],
                                                      "name": call["name"], "args": call["args"], "relaySessionId": sid})
        await client.request("talk.session.submitToolResult", {"sessionId": sid, "callId": call["callId"],
                                                               "result": {"text": "done"}})
        violations = self.gw.control({"cmd": "violations"})["violations"]
        self.assertEqual(sorted(v["errors"][0] for v in violations),
                         ["openclaw_agent_control answered without talk.session.steer",
                          "openclaw_agent_control sent as a consult; it goes to talk.session.steer"])
        self.expected_violations = 2


if __name__ == "__main__":
    unittest.main()
