"""What the realtime relay's provider hears of the user in one turn, and what the relay forwards of it.

Upstream's relay (openclaw/openclaw src/gateway/talk-realtime-relay.ts @0a44de75) creates its provider bridge
with `interruptResponseOnInputAudio` (line 372) and forwards every transcript the provider gives of the user
(`onTranscript`, lines 453-476) as `{type: "transcript", role: "user", text, final}` with a `talkEvent` of type
`transcript.delta` (partial) or `transcript.done` (final), payload `{role, text}`:
- the provider's server VAD: on `input_audio_buffer.speech_started` the OpenAI bridge (extensions/openai/
  realtime-voice-provider.ts, `handleEvent` and `handleBargeIn`) calls `onClearAudio`, which the relay sends as
  `{type: "clear"}` with a `talkEvent` `output.audio.done`, payload `{reason: "clear"}`, final (lines 394-404),
  on every speech start (and truncates the answer where the client's outstanding playback marks put it, forgetting
  them); the provider cancels the response itself (`interrupt_response`), and its `response.cancelled` /
  `response.done` reach the client as `audioDone` (lines 431-450), with no `talkEvent`;
- a partial's text is the provider's delta, a fragment to append to the ones before it (OpenAI's
  `conversation.item.input_audio_transcription.delta`, Google Live's `inputTranscription` pieces), not the
  words so far; the final carries them all. OpenAI transcribes the committed turn, so its deltas come after the
  speech, and its final may come after the answer it started; Google streams them as the user speaks.

`UserTurn` is that turn's state, with no I/O: the session feeds it the audio's loudness and speaks its answers.
"""

import asyncio

WINDOW_MS = 20
# Loud audio, in a row, before the stand-in VAD calls it speech: a click or a knock is shorter.
VAD_START_MS = 100
# Speech heard before a recogniser's first guess at which clip it is (the envelope match is unreliable before).
CLIP_GUESS_AFTER_MS = 300
# Timings of the user's words: as Google Live streams them, as OpenAI sends them after the turn, the same after
# the answer, or only the final (the reference relay before it followed upstream).
USER_TRANSCRIPTS = ("streaming", "after", "late", "off")


class UserTurn:
    """One turn of the user's as the provider hears it: when its speech starts, and which of its words are due."""

    def __init__(self, vad_start_ms=VAD_START_MS):
        self.vad_windows = max(1, vad_start_ms // WINDOW_MS)
        self.loud_run = 0
        self.speech_started = False
        self.speech_ms = 0            # audio heard since the speech started
        self.speech_sample = None     # where in the turn's samples the speech started (pre-roll included)
        self.words = None             # the words a recogniser has for it, once known
        self.words_ms = None          # how long they take to say (their reveal is proportional to it)
        self.sent = 0                 # words forwarded so far
        self.guessing = False         # a clip guess is under way
        self.next_guess_ms = CLIP_GUESS_AFTER_MS

    def window(self, loud, start_sample, window_samples, pre_roll_samples):
        """Takes the 20 ms window at `start_sample` of the turn; True when it starts the speech (the provider's
        `speech_started`), which then counts from the first loud window of the run, less `pre_roll_samples`."""
        if self.speech_started:
            self.speech_ms += WINDOW_MS
            return False
        self.loud_run = self.loud_run + 1 if loud else 0
        if self.loud_run < self.vad_windows:
            return False
        self.speech_started = True
        self.speech_ms = self.loud_run * WINDOW_MS
        first = start_sample - (self.loud_run - 1) * window_samples
        self.speech_sample = max(0, first - pre_roll_samples)
        return True

    def know(self, text, duration_ms):
        """The recogniser's words for this turn (`text`), said over `duration_ms`."""
        if self.words is None and text:
            self.words, self.words_ms = text.split(), max(1, int(duration_ms))

    def wants_guess(self):
        return (self.speech_started and self.words is None and not self.guessing
                and self.speech_ms >= self.next_guess_ms)

    def due(self):
        """The fragment of words now due (with the space that joins it to the ones before), or None."""
        if not self.words or self.sent >= len(self.words):
            return None
        letters = [len(w) for w in self.words]
        heard = sum(letters) * self.speech_ms / self.words_ms
        count, total = 0, 0
        for n in letters:
            if total + n > heard:
                break
            total += n
            count += 1
        if count <= self.sent:
            return None
        fragment = " ".join(self.words[self.sent:count])
        fragment = fragment if self.sent == 0 else " " + fragment
        self.sent = count
        return fragment


def fragments(text):
    """A final's words as deltas, as a provider that transcribes the committed turn sends them."""
    words = text.split()
    return [w if i == 0 else " " + w for i, w in enumerate(words)]


class RealtimeUser:
    """The relay session's side of it (a mixin of `RelaySession`): the clear, the user's words."""

    async def provider_heard_speech(self, turn):
        """The provider's VAD heard speech start: with `interruptResponseOnInputAudio`, `clear`, and the answer
        being sent stops (`audioDone`), as the provider cancels its response."""
        if not self.relay.settings["interruptResponseOnInputAudio"]:
            return
        output = self.output
        cancels = output is not None and not output.get("done") and not output["cancelled"]
        self.truncate_marks()
        await self.emit("clear", None, "output.audio.done", output["turnId"] if output else turn.turn_id, True,
                        talk_payload={"reason": "clear"})
        self.relay.record("server-vad-clear", sessionId=self.session_id, turnId=turn.turn_id,
                          answerCancelled=cancels)
        if cancels:
            output["cancelled"] = True
            item = output["turnId"][:8]
            await self.emit("audioDone", {"itemId": "item-" + item, "responseId": "resp-" + item})

    async def user_words(self, turn):
        """While the user speaks (`userTranscripts` "streaming"): the words now due, as a delta. They are the next
        configured final's, else those of the corpus clip the speech so far begins like."""
        s = self.relay.settings
        user = turn.user
        if s["userTranscripts"] != "streaming" or not user.speech_started:
            return
        if user.words is None:
            peek = s["texts"][0] if s["texts"] else s["text"]
            if peek:
                user.know(peek, len(peek.split()) * int(s["partialEveryMs"]))
            elif self.relay.clip_index is not None and user.wants_guess():
                user.guessing = True
                self.gateway.spawn(self._guess_clip(turn))
        fragment = user.due()
        if fragment:
            await self.user_transcript(turn, fragment, False)

    async def _guess_clip(self, turn):
        user = turn.user
        samples = turn.samples[user.speech_sample:]
        try:
            # Pure-Python work over the corpus: off the loop, so appends stay answered.
            match = await asyncio.to_thread(self.relay.clip_index.match_start, samples, self.rate)
        finally:
            user.guessing = False
            user.next_guess_ms = user.speech_ms + int(self.relay.settings["partialEveryMs"])
        if match:
            user.know(match[1], match[2])

    async def user_transcript(self, turn, text, final):
        await self.emit("transcript", {"role": "user", "text": text, "final": final},
                        "transcript.done" if final else "transcript.delta", turn.turn_id, final,
                        talk_payload={"role": "user", "text": text})
