"""Self-test of what the realtime relay forwards of the user, as upstream's does (gateway/talk_relay_user.py):
the provider's server VAD clearing the answer, and the user's words as deltas before their final.

Run: python3 -m unittest test_refgw_realtime_user (from tools/reference-gateway)
"""

import asyncio

from shared_dir import corpus_manifest
from test_refgw_relay import RelayTestCase, encode, speech_16k

from gateway.talk_audio import read_wav, rms

LONG_REPLY = "a long answer that takes a good few seconds to say out loud, and then some more of it"


def last_loud_chunk(samples):
    """The index of the last 100 ms chunk (of `encode`'s) holding a loud 20 ms window."""
    window = 320
    last = max(i for i in range(0, len(samples) - window, window) if rms(samples[i:i + window]) >= 400)
    return last // 1600


def user_transcripts(seen):
    return [p for p in seen if p["type"] == "transcript" and p["role"] == "user"]


class RealtimeUserTests(RelayTestCase):
    async def _session(self, **settings):
        self.gw.control({"cmd": "talk-uplink", "realtime": "pcm16/16000"})
        self.gw.control(dict({"cmd": "talk-relay"}, **settings))
        client, _ = await self.operator()
        created = await client.request("talk.session.create", {"mode": "realtime", "transport": "gateway-relay",
                                                               "brain": "agent-consult"})
        self.assertTrue(created["ok"], created)
        return client, created["payload"]["sessionId"]

    async def test_words_come_as_deltas_while_the_user_speaks_then_the_final(self):
        client, sid = await self._session(texts=["go forward ten meters"], partialEveryMs=100, audioPace=0.1)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        seen = await self.events_until(client, lambda p: p["type"] == "transcript" and p["role"] == "user"
                                       and p["final"], timeout=20)
        user = user_transcripts(seen)
        partials, final = user[:-1], user[-1]
        self.assertEqual(final["text"], "go forward ten meters")
        self.assertEqual([p["text"] for p in partials], ["go", " forward", " ten", " meters"])
        self.assertEqual("".join(p["text"] for p in partials), final["text"])
        for p in partials:
            self.assertFalse(p["final"])
            self.assertEqual((p["talkEvent"]["type"], p["talkEvent"]["payload"], p["talkEvent"]["final"]),
                             ("transcript.delta", {"role": "user", "text": p["text"]}, False))
        self.assertEqual((final["talkEvent"]["type"], final["talkEvent"]["payload"]),
                         ("transcript.done", {"role": "user", "text": "go forward ten meters"}))
        # The first word came while the speech was still arriving, not after its end.
        heard_before = [p["type"] for p in seen[:seen.index(partials[0])]].count("inputAudio")
        self.assertLessEqual(heard_before, last_loud_chunk(speech_16k()))
        # The provider's VAD heard the speech start: a clear, with nothing playing, before the first word.
        clears = [p for p in seen if p["type"] == "clear"]
        self.assertEqual(len(clears), 1, clears)
        self.assertLess(seen.index(clears[0]), seen.index(partials[0]))
        self.assertEqual((clears[0]["talkEvent"]["type"], clears[0]["talkEvent"]["payload"],
                          clears[0]["talkEvent"]["final"]), ("output.audio.done", {"reason": "clear"}, True))

    async def test_speech_over_the_answer_clears_it_and_its_audio_stops(self):
        client, sid = await self._session(texts=["x", "wait"], audioPace=1.0, reply=LONG_REPLY)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        answering = (await self.events_until(client, lambda p: p["type"] == "audio", timeout=20))[-1]
        old_turn = answering["talkEvent"]["turnId"]
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        # Until the new turn's answer is over: its audioDone (the cut answer's names the old item).
        seen = await self.events_until(client, lambda p: p["type"] == "audioDone"
                                       and p.get("itemId") != "item-" + old_turn[:8], timeout=30)
        clear = next(p for p in seen if p["type"] == "clear")
        after = seen[seen.index(clear) + 1:]
        self.assertEqual(clear["talkEvent"]["turnId"], old_turn)
        self.assertEqual(after[0]["type"], "audioDone")   # the provider's response.cancelled
        self.assertNotIn("talkEvent", after[0])
        # None of the cut answer's audio after the clear; the answer to the new turn plays in a turn of its own.
        late = [p for p in after if p["type"] == "audio" and p["talkEvent"]["turnId"] == old_turn]
        self.assertEqual(late, [])
        self.assertGreater(len([p for p in after if p["type"] == "audio"]), 0)
        spoken = [p for p in after if p["type"] == "transcript" and p["role"] == "assistant"]
        self.assertEqual(len(spoken), 1, spoken)   # the new turn's answer
        cleared = [e for e in self.gw.control({"cmd": "relay-log"})["log"] if e["kind"] == "server-vad-clear"]
        self.assertEqual([e["answerCancelled"] for e in cleared], [False, True])

    async def test_a_knock_the_vad_does_not_call_speech_is_no_turn(self):
        """OpenAI's server VAD commits (and answers) only speech it heard start: a 60 ms knock, under the VAD's
        100 ms, then a second of silence is no turn of the user's; the turn goes on into their speech."""
        client, sid = await self._session(texts=["go forward ten meters"], audioPace=0.1)
        knock = [3000 if i % 20 < 10 else -3000 for i in range(960)] + [0] * 16000
        await self.stream(client, sid, encode(knock + speech_16k(), "pcm16"))
        await self.events_until(client, lambda p: p["type"] == "transcript" and p["role"] == "user" and p["final"],
                                timeout=20)
        turns = self.gw.control({"cmd": "relay-turns"})["turns"]
        self.assertEqual(len(turns), 1, [(t["durationMs"], t["text"]) for t in turns])
        self.assertGreater(turns[0]["durationMs"], (len(knock) + len(speech_16k())) // 16 - 1000)

    async def test_without_interrupt_response_the_answer_plays_on_over_speech(self):
        client, sid = await self._session(texts=["x", "wait"], audioPace=1.0, reply=LONG_REPLY,
                                          interruptResponseOnInputAudio=False)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        answering = (await self.events_until(client, lambda p: p["type"] == "audio", timeout=20))[-1]
        old_turn = answering["talkEvent"]["turnId"]
        await self.stream(client, sid, encode(speech_16k()[:-16000], "pcm16"))
        seen = await self.events_until(client, lambda p: p["type"] == "audio"
                                       and p["talkEvent"]["turnId"] == old_turn, timeout=5)
        self.assertNotIn("clear", [p["type"] for p in seen])

    async def test_after_the_turn_as_openai_transcribes_it(self):
        client, sid = await self._session(texts=["go forward ten meters"], userTranscripts="after",
                                          audioPace=0.1)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        seen = await self.events_until(client, lambda p: p["type"] == "audioDone", timeout=20)
        user = user_transcripts(seen)
        self.assertEqual([(p["text"], p["final"]) for p in user],
                         [("go", False), (" forward", False), (" ten", False), (" meters", False),
                          ("go forward ten meters", True)])
        # Every delta came after all the speech had been received (the provider transcribes the committed turn).
        heard_before = [p["type"] for p in seen[:seen.index(user[0])]].count("inputAudio")
        self.assertGreater(heard_before, last_loud_chunk(speech_16k()))

    async def test_late_the_users_words_come_after_the_answer_they_started(self):
        """OpenAI's transcription of a turn may finish after the response it started has ended."""
        client, sid = await self._session(texts=["go forward ten meters"], userTranscripts="late",
                                          audioPace=0.1)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        seen = await self.events_until(client, lambda p: p["type"] == "transcript" and p["role"] == "user"
                                       and p["final"], timeout=20)
        kinds = [p["type"] for p in seen]
        first_user = seen.index(user_transcripts(seen)[0])
        self.assertLess(len(kinds) - 1 - kinds[::-1].index("audio"), first_user)
        self.assertLess(kinds.index("audioDone"), first_user)
        self.assertEqual("".join(p["text"] for p in user_transcripts(seen)[:-1]), "go forward ten meters")

    async def test_off_sends_only_the_final(self):
        client, sid = await self._session(texts=["go forward ten meters"], userTranscripts="off", audioPace=0.1)
        await self.stream(client, sid, encode(speech_16k(), "pcm16"))
        seen = await self.events_until(client, lambda p: p["type"] == "audioDone", timeout=20)
        self.assertEqual([(p["text"], p["final"]) for p in user_transcripts(seen)],
                         [("go forward ten meters", True)])

    async def test_an_unknown_timing_is_refused(self):
        refused = self.gw.control({"cmd": "talk-relay", "userTranscripts": "sometimes"})
        self.assertIn("userTranscripts is one of", str(refused))
        self.assertEqual(self.gw.control({"cmd": "talk-relay"})["settings"]["userTranscripts"], "streaming")

    async def test_a_clip_is_guessed_from_its_start(self):
        """With no configured text, the words are those of the corpus clip the speech so far begins like."""
        manifest = corpus_manifest(self)
        samples, _ = read_wav(str(manifest.parent / "ps_goforward.wav"))
        client, sid = await self._session(audioPace=0.1)
        for chunk in encode(samples + [0] * 16000, "pcm16"):
            await self.stream(client, sid, [chunk])
            await asyncio.sleep(0.1)   # the microphone's pace: the guess takes its time, as a recogniser's does
        seen = await self.events_until(client, lambda p: p["type"] == "transcript" and p["role"] == "user"
                                       and p["final"], timeout=20)
        user = user_transcripts(seen)
        self.assertEqual(user[-1]["text"], "go forward ten meters", self.gw.control({"cmd": "relay-turns"}))
        self.assertEqual("".join(p["text"] for p in user[:-1]), "go forward ten meters")
        heard_before = [p["type"] for p in seen[:seen.index(user[0])]].count("inputAudio")
        self.assertLessEqual(heard_before, last_loud_chunk(samples))

    async def test_a_turn_says_where_the_vad_heard_the_speech_start(self):
        """`relay-turns` gives a realtime turn's `speechStartMs` (the audio a provider transcribes: the bench decodes
        a barge-in's words from there): 1.5 s of silence, then the clip, starts it at the clip's first loud
        window less the VAD's 100 ms pre-roll."""
        client, sid = await self._session(texts=["go forward ten meters"], audioPace=0.1)
        lead = [0] * 24000
        await self.stream(client, sid, encode(lead + speech_16k(), "pcm16"))
        await self.events_until(client, lambda p: p["type"] == "transcript" and p["role"] == "user" and p["final"],
                                timeout=20)
        turns = self.gw.control({"cmd": "relay-turns"})["turns"]
        self.assertEqual(len(turns), 1, turns)
        window = 320
        first_loud = next(i for i in range(0, len(speech_16k()), window) if rms(speech_16k()[i:i + window]) >= 400)
        expected_ms = (len(lead) + first_loud) // 16 - 100
        self.assertLessEqual(abs(turns[0]["speechStartMs"] - expected_ms), 20, (turns[0], expected_ms))

    def test_only_the_newest_turns_keep_their_audio(self):
        from gateway.talk_relay import TURNS_WITH_AUDIO, RelayState
        state = RelayState()
        state.turns = [{"turnId": "t%d" % i, "samples": [1, 2, 3]} for i in range(TURNS_WITH_AUDIO + 2)]
        state.release_old_audio()
        self.assertEqual([bool(t["samples"]) for t in state.turns],
                         [False, False] + [True] * TURNS_WITH_AUDIO)
        self.assertEqual([t.get("audioReleased", False) for t in state.turns[:3]], [True, True, False])
