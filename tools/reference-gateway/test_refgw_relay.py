"""Self-test of the Talk relays: catalog, naming eras, uplink contracts, faults and limits.

Run: python3 -m unittest test_refgw_relay (from tools/reference-gateway)
"""

import array
import asyncio
import base64
import ctypes
import os
import time
import unittest

from refgw_harness import SHARED_TOKEN, GatewayProcess, GatewayTestCase
from minimal_client import Identity
from shared_dir import corpus_manifest

from gateway.talk_audio import OpusStream, read_wav, rms

SPEECH_RAW = "/usr/share/pocketsphinx/test/data/goforward.raw"
TALK = ["operator.read", "operator.write", "operator.talk"]


def speech_16k():
    samples = array.array("h")
    with open(SPEECH_RAW, "rb") as handle:
        samples.frombytes(handle.read())
    return samples.tolist() + [0] * 16000   # a second of silence ends the turn


def reference_wav():
    """goforward.raw as a WAV file (what relay-turns correlates against)."""
    import tempfile
    import wave
    path = os.path.join(tempfile.gettempdir(), "refgw-relay-goforward-%d.wav" % os.getpid())
    if not os.path.exists(path):
        with wave.open(path, "wb") as handle:
            handle.setnchannels(1)
            handle.setsampwidth(2)
            handle.setframerate(16000)
            with open(SPEECH_RAW, "rb") as raw:
                handle.writeframes(raw.read())
    return path


def error_code(response):
    return (response.get("error") or {}).get("code")


def ulaw_encode(sample):
    sign = 0x80 if sample < 0 else 0
    value = min(abs(sample), 32635) + 0x84
    exponent = 7
    while exponent > 0 and not value & (0x4000 >> (7 - exponent)):
        exponent -= 1
    return ~(sign | (exponent << 4) | ((value >> (exponent + 3)) & 0x0F)) & 0xFF


def encode(samples, encoding):
    """Chunks of 100 ms for a 16 kHz signal under a contract (µ-law: 8 kHz by pair averaging)."""
    if encoding == "pcm16":
        data = array.array("h", samples).tobytes()
        return [data[i:i + 3200] for i in range(0, len(data), 3200)]
    if encoding == "g711_ulaw":
        down = [(samples[i] + samples[i + 1]) // 2 for i in range(0, len(samples) - 1, 2)]
        data = bytes(ulaw_encode(s) for s in down)
        return [data[i:i + 800] for i in range(0, len(data), 800)]
    lib = OpusStream._load()
    lib.opus_encoder_create.restype = ctypes.c_void_p
    lib.opus_encoder_create.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    lib.opus_encode.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int16), ctypes.c_int,
                                ctypes.c_char_p, ctypes.c_int32]
    error = ctypes.c_int(0)
    handle = lib.opus_encoder_create(16000, 1, 2048, ctypes.byref(error))   # VOIP
    out = ctypes.create_string_buffer(1275)
    chunks, batch = [], b""
    for n, start in enumerate(range(0, len(samples) - 319, 320)):
        frame = (ctypes.c_int16 * 320)(*samples[start:start + 320])
        length = lib.opus_encode(handle, frame, 320, out, 1275)
        batch += bytes([length >> 8, length & 0xFF]) + out.raw[:length]
        if n % 5 == 4:
            chunks.append(batch)
            batch = b""
    return chunks + ([batch] if batch else [])


class KeepingEvents:
    """A client whose requests keep the events that arrive before their answer, for `recv`."""

    def __init__(self, client):
        self.client, self.ws, self.kept = client, client.ws, []

    async def recv(self, timeout=5):
        return self.kept.pop(0) if self.kept else await self.client.recv(timeout)

    async def response(self, req_id, timeout=5):
        while True:
            frame = await self.client.recv(timeout)
            if frame.get("type") == "res" and frame.get("id") == req_id:
                return frame
            self.kept.append(frame)

    async def request(self, method, params, timeout=5):
        import json
        import uuid
        req_id = str(uuid.uuid4())
        await self.ws.send(json.dumps({"type": "req", "id": req_id, "method": method, "params": params}))
        return await self.response(req_id, timeout)

    async def wait_event(self, name, timeout=5):
        while True:
            frame = await self.recv(timeout)
            if frame.get("type") == "event" and frame.get("event") == name:
                return frame

    async def close(self):
        await self.client.close()


class RelayTestCase(GatewayTestCase):
    ARGS = ()

    @classmethod
    def setUpClass(cls):
        cls.gw = GatewayProcess("--token", SHARED_TOKEN, "--auto-approve", "--quiet", *cls.ARGS)

    @classmethod
    def tearDownClass(cls):
        cls.gw.stop()

    def setUp(self):
        self.gw.control({"cmd": "talk-relay", "reset": True, "drainMs": 1500,
                         "era": self.ERA if hasattr(self, "ERA") else "unified"})
        self.gw.control({"cmd": "relay-turns", "clear": True})
        self.gw.control({"cmd": "relay-log", "clear": True})

    def tearDown(self):
        if self.gw.info["schema"] is not None:
            violations = self.gw.control({"cmd": "violations", "clear": True})
            self.assertEqual(violations["count"], getattr(self, "expected_violations", 0), violations)
            self.assertEqual(violations["serverViolations"], [], violations)

    async def operator(self):
        client, res = await self.handshake(self.gw.url, Identity(), auth={"token": SHARED_TOKEN},
                                           scopes=TALK, client_id="cli", mode="cli")
        self.assertTrue(res["ok"], res)
        return KeepingEvents(client), res["payload"]

    async def events_until(self, client, done, timeout=10):
        """Relay events (payloads) until `done(payload)` holds."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            frame = await client.recv(max(0.05, deadline - time.monotonic()))
            if frame.get("type") == "event" and frame["event"] in ("talk.event", "talk.realtime.relay",
                                                                    "talk.transcription.relay"):
                seen.append(frame["payload"])
                if done(frame["payload"]):
                    return seen

    async def stream(self, client, session_id, chunks, method="talk.session.appendAudio",
                     key="sessionId"):
        for chunk in chunks:
            res = await client.request(method, {key: session_id,
                                                "audioBase64": base64.b64encode(chunk).decode()})
            self.assertTrue(res["ok"], res)


class TranscriptionRelayTests(RelayTestCase):
    async def test_catalog_and_unified_names(self):
        client, hello = await self.operator()
        methods, events = hello["features"]["methods"], hello["features"]["events"]
        self.assertIn("talk.session.appendAudio", methods)
        self.assertIn("talk.event", events)
        self.assertNotIn("talk.realtime.session", methods)
        self.assertNotIn("talk.realtime.relay", events)
        catalog = (await client.request("talk.catalog", {}))["payload"]
        self.assertTrue(catalog["transcription"]["ready"])
        self.assertEqual(catalog["realtime"]["providers"][0]["inputAudioFormats"],
                         [{"encoding": "pcm16", "sampleRateHz": 24000, "channels": 1}])
        old = await client.request("talk.realtime.session", {})
        self.assertEqual(error_code(old), "INVALID_REQUEST")

    async def _transcribe(self, encoding, rate):
        self.gw.control({"cmd": "talk-uplink", "transcription": "%s/%d" % (encoding, rate)})
        self.gw.control({"cmd": "talk-relay", "texts": ["go forward ten meters"]})
        client, _ = await self.operator()
        created = await client.request("talk.session.create", {"mode": "transcription",
                                                               "transport": "gateway-relay",
                                                               "brain": "none"})
        self.assertTrue(created["ok"], created)
        result = created["payload"]
        self.assertEqual(result["audio"], {"inputEncoding": encoding, "inputSampleRateHz": rate})
        self.assertFalse(result["ready"])
        await self.stream(client, result["sessionId"], encode(speech_16k(), encoding))
        seen = await self.events_until(client, lambda p: p["type"] == "transcript" and p["text"] == ""
                                       and p.get("talkEvent", {}).get("type") == "turn.ended")
        kinds = [p["type"] for p in seen]
        for kind in ("ready", "speechStart", "inputAudio", "partial"):
            self.assertIn(kind, kinds)
        finals = [p for p in seen if p["type"] == "transcript" and p["text"]]
        self.assertEqual([p["text"] for p in finals], ["go forward ten meters"])
        self.assertEqual(finals[0]["transcriptionSessionId"], result["sessionId"])
        return client, result, None

    async def test_each_contract_decodes_what_was_sent(self):
        for encoding, rate in (("g711_ulaw", 8000), ("pcm16", 16000), ("opus", 16000)):
            with self.subTest(encoding=encoding):
                self.gw.control({"cmd": "relay-turns", "clear": True})
                client, _, _ = await self._transcribe(encoding, rate)
                turns = self.gw.control({"cmd": "relay-turns", "reference": reference_wav()})["turns"]
                self.assertEqual(len(turns), 1, turns)
                self.assertGreaterEqual(turns[0]["correlation"], 0.9, turns[0])
                self.assertEqual(turns[0]["encoding"], encoding)
                self.assertGreater(turns[0]["durationMs"], 2500)
                await client.close()

    async def test_clip_fingerprint_gives_the_manifest_transcript(self):
        manifest = corpus_manifest(self)
        samples, _ = read_wav(str(manifest.parent / "ps_goforward.wav"))
        client, _ = await self.operator()
        created = (await client.request("talk.session.create", {"mode": "transcription"}))["payload"]
        await self.stream(client, created["sessionId"], encode(samples + [0] * 16000, "g711_ulaw"))
        seen = await self.events_until(client, lambda p: p["type"] == "transcript" and p["text"])
        self.assertEqual(seen[-1]["text"], "go forward ten meters")

    async def test_a_turn_ends_only_on_received_silence(self):
        """As a provider's endpointing: 800 ms of silence received, not a pause in the appends."""
        self.gw.control({"cmd": "talk-relay", "texts": ["go forward ten meters"]})
        client, _ = await self.operator()
        sid = (await client.request("talk.session.create", {"mode": "transcription"}))["payload"]["sessionId"]
        speech = speech_16k()[:-16000]
        window = 320
        last_loud = max(i for i in range(0, len(speech) - window, window)
                        if rms(speech[i:i + window]) >= 400) + window
        speech = speech[:last_loud]
        await self.stream(client, sid, encode(speech + [0] * (16 * 700), "g711_ulaw"))
        with self.assertRaises(asyncio.TimeoutError):   # 700 ms received, then nothing: no final however long
            await self.events_until(client, lambda p: p["type"] == "transcript" and p["text"], timeout=1.5)
        await self.stream(client, sid, encode([0] * (16 * 200), "g711_ulaw"))
        seen = await self.events_until(client, lambda p: p["type"] == "transcript" and p["text"], timeout=5)
        self.assertEqual(seen[-1]["text"], "go forward ten meters")

    async def test_close_commits_and_drains(self):
        self.gw.control({"cmd": "talk-relay", "texts": ["late words"], "idleMs": 5000,
                         "silenceMs": 99999})
        client, _ = await self.operator()
        sid = (await client.request("talk.session.create", {"mode": "transcription"}))["payload"]["sessionId"]
        await self.stream(client, sid, encode(speech_16k()[:16000], "g711_ulaw"))
        self.assertTrue((await client.request("talk.session.close", {"sessionId": sid}))["ok"])
        seen = await self.events_until(client, lambda p: p["type"] == "close")
        types = [(p["type"], p.get("text"), p.get("talkEvent", {}).get("type")) for p in seen]
        self.assertIn(("transcript", "", "input.audio.committed"), types)
        self.assertIn(("transcript", "late words", "transcript.done"), types)
        self.assertEqual(seen[-1]["reason"], "completed")
        late = await client.request("talk.session.appendAudio", {"sessionId": sid, "audioBase64": "AAAA"})
        self.assertEqual(error_code(late), "UNAVAILABLE")

    async def test_catalog_of_an_older_gateway_has_no_ready(self):
        client, _ = await self.operator()
        self.gw.control({"cmd": "talk-relay", "catalogOmitsReady": True})
        catalog = (await client.request("talk.catalog", {}))["payload"]
        for mode in ("speech", "transcription", "realtime"):
            self.assertNotIn("ready", catalog[mode])
        created = await client.request("talk.session.create", {"mode": "transcription"})
        self.assertTrue(created["ok"], created)

    async def test_faults(self):
        client, _ = await self.operator()
        self.gw.control({"cmd": "talk-relay", "ready": False})
        catalog = (await client.request("talk.catalog", {}))["payload"]
        self.assertFalse(catalog["transcription"]["ready"])
        self.assertEqual(error_code(await client.request("talk.session.create", {"mode": "transcription"})),
                         "UNAVAILABLE")
        self.gw.control({"cmd": "talk-relay", "ready": True, "errorAfterAppends": 3})
        sid = (await client.request("talk.session.create", {"mode": "transcription"}))["payload"]["sessionId"]
        await self.stream(client, sid, encode(speech_16k(), "g711_ulaw")[:3])
        seen = await self.events_until(client, lambda p: p["type"] == "close")
        self.assertEqual([p["type"] for p in seen][-2:], ["error", "close"])
        self.assertEqual(seen[-1]["reason"], "error")
        gone = await client.request("talk.session.appendAudio", {"sessionId": sid, "audioBase64": "AAAA"})
        self.assertIn("Unknown", gone["error"]["message"])
        self.assertEqual(error_code(gone), "UNAVAILABLE")
        self.gw.control({"cmd": "talk-relay", "errorAfterAppends": 0, "finalDelayMs": 1500,
                         "texts": ["slow"]})
        sid = (await client.request("talk.session.create", {"mode": "transcription"}))["payload"]["sessionId"]
        await self.stream(client, sid, encode(speech_16k(), "g711_ulaw"))
        sent = time.monotonic()
        await self.events_until(client, lambda p: p["type"] == "transcript" and p["text"] == "slow")
        self.assertGreater(time.monotonic() - sent, 1.0)   # the turn ended 200 ms before the last append
        expired = self.gw.control({"cmd": "relay-expire"})["expired"]
        self.assertIn(sid, expired)
        seen = await self.events_until(client, lambda p: p["type"] == "close")
        self.assertEqual(seen[-1]["transcriptionSessionId"], sid)

    async def test_limits(self):
        client, _ = await self.operator()
        ids = [(await client.request("talk.session.create", {"mode": "transcription"}))["payload"]["sessionId"]
               for _ in range(2)]
        third = await client.request("talk.session.create", {"mode": "transcription"})
        self.assertIn("Too many active transcription Talk sessions", third["error"]["message"])
        big = base64.b64encode(bytes(400 * 1024)).decode()   # 546 KiB of base64
        res = await client.request("talk.session.appendAudio", {"sessionId": ids[0], "audioBase64": big})
        self.assertIn("too large", res["error"]["message"])
        self.gw.control({"cmd": "talk-relay", "appendDelayMs": 300})
        chunk = base64.b64encode(bytes(800)).decode()
        import json
        import uuid
        req_ids = []
        for _ in range(6):   # no waiting: six in flight at once
            req_ids.append(str(uuid.uuid4()))
            await client.ws.send(json.dumps({"type": "req", "id": req_ids[-1],
                                             "method": "talk.session.appendAudio",
                                             "params": {"sessionId": ids[1], "audioBase64": chunk}}))
        for req_id in req_ids:
            self.assertTrue((await client.response(req_id))["ok"])
        log = self.gw.control({"cmd": "relay-log"})
        self.assertEqual(max(log["maxInFlight"].values()), 6)
        limits = [e["what"] for e in log["log"] if e["kind"] == "limit"]
        self.assertEqual(limits.count("appends in flight"), 2)
        self.assertIn("append size", limits)
        self.expected_violations = 3   # one too large, two beyond four in flight

    async def test_bad_params_are_schema_violations(self):
        client, _ = await self.operator()
        res = await client.request("talk.session.create", {"mode": "transcription", "bogus": 1})
        self.assertEqual(error_code(res), "INVALID_REQUEST")
        self.expected_violations = 1


class LegacyEraTests(RelayTestCase):
    ARGS = ("--talk-era", "legacy")
    ERA = "legacy"

    async def test_legacy_names_and_events(self):
        self.gw.control({"cmd": "talk-uplink", "realtime": "pcm16/16000"})
        self.gw.control({"cmd": "talk-relay", "texts": ["old times"], "audioPace": 0.1})
        client, hello = await self.operator()
        self.assertIn("talk.realtime.relayAudio", hello["features"]["methods"])
        self.assertNotIn("talk.session.create", hello["features"]["methods"])
        self.assertEqual([e for e in hello["features"]["events"] if e.startswith("talk.") and e != "talk.mode"],
                         ["talk.realtime.relay"])
        created = (await client.request("talk.realtime.session", {"sessionKey": "agent:main:main"}))["payload"]
        sid = created["relaySessionId"]
        await self.stream(client, sid, encode(speech_16k(), "pcm16"), "talk.realtime.relayAudio",
                          "relaySessionId")
        seen = await self.events_until(client, lambda p: p["type"] == "audioDone", timeout=20)
        self.assertTrue(all("talkEvent" not in p for p in seen))
        marks = [p["markName"] for p in seen if p["type"] == "mark"]
        self.assertEqual(len(marks), len([p for p in seen if p["type"] == "audio"]))
        self.assertTrue((await client.request("talk.realtime.relayMark",
                                              {"relaySessionId": sid, "markName": marks[-1]}))["ok"])
        self.assertTrue((await client.request("talk.realtime.relayStop", {"relaySessionId": sid}))["ok"])
        self.assertEqual(error_code(await client.request("talk.catalog", {})), "INVALID_REQUEST")


if __name__ == "__main__":
    unittest.main()
