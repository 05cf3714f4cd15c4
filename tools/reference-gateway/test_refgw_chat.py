"""Self-test of the scripted chat agent: chat.send, idempotency, lost acks, history, abort, talk.config.

Run: python3 -m unittest discover -s tools/reference-gateway -v
"""

import asyncio
import uuid

from websockets.exceptions import ConnectionClosed

from refgw_harness import READ_WRITE, SHARED_TOKEN, GatewayProcess, GatewayTestCase
from minimal_client import Identity

SESSION = "agent:main:main"


def send_params(message, key=None):
    return {"sessionKey": SESSION, "message": message, "thinking": "low", "timeoutMs": 30000,
            "idempotencyKey": key or str(uuid.uuid4())}


class ChatAgentTests(GatewayTestCase):
    """One Gateway for the suite; each test resets the script and faults."""

    @classmethod
    def setUpClass(cls):
        cls.gw = GatewayProcess("--token", SHARED_TOKEN, "--auto-approve",
                                "--tick-interval-ms", "300")

    @classmethod
    def tearDownClass(cls):
        cls.gw.stop()

    def setUp(self):
        self.gw.control({"cmd": "chat-script", "reset": True})
        self.gw.control("chat-release")
        self.gw.control("talk-config normal")

    def tearDown(self):
        status = self.gw.control("status")
        self.assertEqual(status["serverViolations"], 0, self.gw.control("violations"))
        self.assertEqual(status["violations"], 0, self.gw.control("violations"))

    async def connect(self, identity=None, scopes=READ_WRITE):
        client, res = await self.handshake(self.gw.url, identity or Identity(),
                                           auth={"token": SHARED_TOKEN}, scopes=scopes)
        self.assertTrue(res["ok"], res)
        return client

    async def chat_events(self, client, run_id, timeout=5):
        """This run's chat events up to a terminal one."""
        events = []
        while True:
            frame = await client.wait_event("chat", timeout)
            if frame["payload"]["runId"] != run_id:
                continue
            events.append(frame["payload"])
            if frame["payload"]["state"] != "delta":
                return events

    async def chat_seen_within(self, client, seconds):
        """Chat events received in the next `seconds` (ticks keep arriving meanwhile)."""
        seen = []
        deadline = asyncio.get_running_loop().time() + seconds
        while (left := deadline - asyncio.get_running_loop().time()) > 0:
            try:
                frame = await client.recv(left)
            except asyncio.TimeoutError:
                break
            if frame.get("event") == "chat":
                seen.append(frame)
        return seen

    def transcripts(self, key):
        return [t for t in self.gw.control("chat-transcripts")["transcripts"]
                if t["idempotencyKey"] == key]

    def last_transcript(self):
        return self.gw.control("chat-transcripts")["transcripts"][-1]

    async def test_a_transcript_is_answered_with_deltas_then_final(self):
        client = await self.connect()
        self.gw.control({"cmd": "chat-script", "reply": "hello there, friend", "chunkChars": 5})
        res = await client.request("chat.send", send_params("hi"))
        self.assertTrue(res["ok"], res)
        self.assertEqual(res["payload"]["status"], "started")
        events = await self.chat_events(client, res["payload"]["runId"])
        self.assertEqual([e["state"] for e in events], ["delta"] * 4 + ["final"])
        self.assertEqual([e["seq"] for e in events], list(range(5)))
        self.assertEqual("".join(e["deltaText"] for e in events[:-1]), "hello there, friend")
        self.assertEqual(events[2]["message"]["content"][0]["text"], "hello there, fr")
        self.assertEqual(events[-1]["message"]["content"][0]["text"], "hello there, friend")
        history = await client.request("chat.history", {"sessionKey": SESSION})
        rows = history["payload"]["messages"]
        self.assertEqual([r["role"] for r in rows[-2:]], ["user", "assistant"])

    async def test_a_resend_follows_the_original_run_and_is_recorded_once(self):
        client = await self.connect()
        self.gw.control({"cmd": "chat-script", "delayMs": 150, "chunkChars": 100})
        params = send_params("once please")
        first = await client.request("chat.send", params)
        again = await client.request("chat.send", params)
        self.assertEqual(again["payload"], {"runId": first["payload"]["runId"], "status": "in_flight"})
        await self.chat_events(client, first["payload"]["runId"])
        after = await client.request("chat.send", params)
        self.assertEqual(after["payload"], {"runId": first["payload"]["runId"], "status": "ok"})
        recorded = self.transcripts(params["idempotencyKey"])
        self.assertEqual(len(recorded), 1)
        self.assertEqual(recorded[0]["sends"], 3)

    async def test_a_resend_of_a_finished_run_replays_its_final_status(self):
        """chat.ts stores the finished result for the idempotency key: ok (or completed), timeout, error, aborted."""
        client = await self.connect()
        for script, expected in ((dict(mode="reply"), "ok"), (dict(mode="error"), "error"),
                                 (dict(mode="aborted"), "aborted")):
            self.gw.control(dict({"cmd": "chat-script", "reset": True, "delayMs": 5}, **script))
            params = send_params("replay %s" % expected)
            first = await client.request("chat.send", params)
            await self.chat_events(client, first["payload"]["runId"])
            again = await client.request("chat.send", params)
            self.assertEqual(again["payload"], {"runId": first["payload"]["runId"], "status": expected})
        self.gw.control({"cmd": "chat-script", "reset": True, "delayMs": 5})
        self.gw.control({"cmd": "chat-ack", "replayStatus": "completed"})
        params = send_params("replay completed")
        first = await client.request("chat.send", params)
        await self.chat_events(client, first["payload"]["runId"])
        self.assertEqual((await client.request("chat.send", params))["payload"]["status"], "completed")
        self.gw.control({"cmd": "chat-ack", "replayStatus": None})

    async def test_a_forgotten_request_is_acked_but_left_out_of_the_records(self):
        """chat-ack forget (bench soak's check of its own counting): the next request runs and is acked as usual,
        but chat-transcripts never shows it; the one after it is recorded again."""
        client = await self.connect()
        self.gw.control({"cmd": "chat-script", "reset": True, "delayMs": 5})
        self.gw.control({"cmd": "chat-ack", "mode": "forget", "count": 1})
        before = len(self.gw.control("chat-transcripts")["transcripts"])
        lost = await client.request("chat.send", send_params("never recorded"))
        self.assertEqual(lost["payload"]["status"], "started")
        await self.chat_events(client, lost["payload"]["runId"])
        kept = await client.request("chat.send", send_params("recorded"))
        await self.chat_events(client, kept["payload"]["runId"])
        messages = [t["message"] for t in self.gw.control("chat-transcripts")["transcripts"][before:]]
        self.assertEqual(messages, ["recorded"])

    async def test_timeout_ms_caps_the_whole_run(self):
        """chat.ts: timeoutMs overrides the agent run's timeout; a longer run ends in an error of kind timeout."""
        client = await self.connect()
        self.gw.control({"cmd": "chat-script", "firstDelayMs": 800})
        params = dict(send_params("a slow tool"), timeoutMs=300)
        first = await client.request("chat.send", params)
        events = await self.chat_events(client, first["payload"]["runId"], timeout=5)
        self.assertEqual((events[-1]["state"], events[-1]["errorKind"]), ("error", "timeout"))
        self.assertEqual(self.last_transcript()["timeoutMs"], 300)
        self.assertEqual((await client.request("chat.send", params))["payload"]["status"], "timeout")

    async def test_replace_error_and_aborted_scripts(self):
        client = await self.connect()
        self.gw.control({"cmd": "chat-script", "mode": "replace", "reply": "first",
                         "replaceWith": "second", "snapshots": False, "chunkChars": 100})
        res = await client.request("chat.send", send_params("x"))
        events = await self.chat_events(client, res["payload"]["runId"])
        self.assertEqual(events[1]["replace"], True)
        self.assertEqual(events[1]["deltaText"], "second")
        self.assertNotIn("message", events[0])
        self.assertEqual(events[-1]["message"]["content"][0]["text"], "second")
        self.gw.control({"cmd": "chat-script", "mode": "error", "errorKind": "rate_limit"})
        res = await client.request("chat.send", send_params("x"))
        events = await self.chat_events(client, res["payload"]["runId"])
        self.assertEqual((events[-1]["state"], events[-1]["errorKind"]), ("error", "rate_limit"))
        self.gw.control({"cmd": "chat-script", "mode": "aborted"})
        res = await client.request("chat.send", send_params("x"))
        events = await self.chat_events(client, res["payload"]["runId"])
        self.assertEqual(events[-1]["state"], "aborted")

    async def test_chat_abort_stops_a_running_reply(self):
        client = await self.connect()
        self.gw.control({"cmd": "chat-script", "delayMs": 200, "chunkChars": 2})
        res = await client.request("chat.send", send_params("a long one"))
        run_id = res["payload"]["runId"]
        await client.wait_event("chat")
        abort = await client.request("chat.abort", {"sessionKey": SESSION, "runId": run_id})
        self.assertEqual(abort["payload"]["runIds"], [run_id])
        events = await self.chat_events(client, run_id)
        self.assertEqual(events[-1]["state"], "aborted")
        self.assertEqual(self.last_transcript()["status"], "aborted")

    async def test_a_stall_sends_no_events_but_writes_the_history(self):
        client = await self.connect()
        self.gw.control({"cmd": "chat-script", "mode": "stall", "stallMs": 100, "reply": "late"})
        res = await client.request("chat.send", send_params("x"))
        self.assertEqual(await self.chat_seen_within(client, 0.5), [])
        rows = (await client.request("chat.history", {"sessionKey": SESSION}))["payload"]["messages"]
        self.assertEqual(rows[-1]["content"][0]["text"], "late")
        self.assertEqual(self.last_transcript()["runId"], res["payload"]["runId"])
        self.assertEqual(self.last_transcript()["status"], "stalled")

    async def test_a_dropped_ack_is_recorded_once_and_the_resend_gets_the_same_run(self):
        identity = Identity()
        client = await self.connect(identity)
        self.gw.control({"cmd": "chat-script", "delayMs": 300, "chunkChars": 100})
        self.gw.control("chat-ack drop 1")
        params = send_params("lost ack")
        with self.assertRaises((ConnectionClosed, asyncio.TimeoutError)):
            await client.request("chat.send", params, timeout=3)
        self.assertEqual(len(self.transcripts(params["idempotencyKey"])), 1)
        client = await self.connect(identity)
        res = await client.request("chat.send", params)
        self.assertEqual(res["payload"]["status"], "in_flight")
        recorded = self.transcripts(params["idempotencyKey"])
        self.assertEqual(len(recorded), 1)
        self.assertEqual(res["payload"]["runId"], recorded[0]["runId"])

    async def test_a_restart_before_the_ack_keeps_the_run(self):
        identity = Identity()
        client = await self.connect(identity)
        self.gw.control({"cmd": "chat-ack", "mode": "restart", "downMs": 200})
        params = send_params("restart ack")
        with self.assertRaises((ConnectionClosed, asyncio.TimeoutError)):
            await client.request("chat.send", params, timeout=3)
        for _ in range(50):
            if self.gw.control("status")["listening"]:
                break
            await asyncio.sleep(0.05)
        client = await self.connect(identity)
        res = await client.request("chat.send", params)
        self.assertIn(res["payload"]["status"], ("in_flight", "ok"))
        self.assertEqual(len(self.transcripts(params["idempotencyKey"])), 1)

    async def test_a_held_ack_comes_on_release(self):
        client = await self.connect()
        self.gw.control("chat-ack hold")
        params = send_params("held")
        pending = asyncio.ensure_future(client.request("chat.send", params))
        await asyncio.sleep(0.3)
        self.assertFalse(pending.done())
        self.assertEqual(len(self.transcripts(params["idempotencyKey"])), 1)
        await asyncio.to_thread(self.gw.control, "chat-release")
        self.assertEqual((await pending)["payload"]["status"], "started")

    async def test_talk_config_and_its_faults(self):
        client = await self.connect(scopes=["operator.read"])
        res = await client.request("talk.config", {})
        self.assertEqual(res["payload"]["config"]["talk"]["silenceTimeoutMs"], 900)
        self.gw.control({"cmd": "talk-config", "config": {"talk": {
            "resolved": {"provider": "system", "config": {}}, "silenceTimeoutMs": 1200}}})
        res = await client.request("talk.config", {})
        self.assertEqual(res["payload"]["config"]["talk"]["silenceTimeoutMs"], 1200)
        self.gw.control("talk-config error")
        self.assertEqual((await client.request("talk.config", {}))["error"]["code"], "UNAVAILABLE")
        self.gw.control("talk-config absent")
        self.assertEqual((await client.request("talk.config", {}))["error"]["code"],
                         "INVALID_REQUEST")
        denied = await client.request("chat.send", send_params("read-only"))
        self.assertEqual(denied["error"]["code"], "FORBIDDEN")

    async def test_session_defaults_can_be_left_out_of_hello_ok(self):
        self.gw.control("session-defaults off")
        try:
            client, res = await self.handshake(self.gw.url, Identity(), auth={"token": SHARED_TOKEN},
                                               scopes=READ_WRITE)
            self.assertNotIn("sessionDefaults", res["payload"]["snapshot"])
        finally:
            self.gw.control("session-defaults on")
        client, res = await self.handshake(self.gw.url, Identity(), auth={"token": SHARED_TOKEN},
                                           scopes=READ_WRITE)
        self.assertIn("sessionDefaults", res["payload"]["snapshot"])

    async def test_injected_events_reach_operators_as_sent(self):
        client = await self.connect()
        payload = {"runId": "foreign", "sessionKey": SESSION, "seq": 7, "state": "delta"}
        self.gw.control({"cmd": "chat-event", "payload": payload})
        frame = await client.wait_event("chat")
        self.assertEqual(frame["payload"], payload)
        self.gw.control({"cmd": "chat-event", "raw": '{"type":"event","event":"chat","payload":7}'})
        frame = await client.wait_event("chat")
        self.assertEqual(frame["payload"], 7)


if __name__ == "__main__":
    import unittest
    unittest.main()
