"""The Talk relays: transcription (audio in, transcripts out) and realtime (audio in, a voice out).

A session belongs to the connection that created it and hears its audio through `append`. Turns are
found as a provider's server VAD would: the first append after a final opens one; `silenceMs` (800) of
quiet *received* after speech (realtime: speech the VAD heard start, `talk_relay_user`) ends it. As
upstream, there is no commit verb and no timer: a client that stops appending never gets a final until
it closes the session (openclaw/openclaw
src/gateway/talk-transcription-relay.ts; Deepgram's 800 ms endpointing in
extensions/deepgram/realtime-transcription-provider.ts, OpenAI's server VAD with 800 ms of silence in
extensions/openai/realtime-transcription-provider.ts). `idleMs` (0 = off, the default) is a test knob
that ends a turn when no audio arrives for that long. The final's text is the next configured text, else the
transcript of the corpus clip the audio matches (by loudness envelope), else "". Every received turn is
kept (decoded) so tests can compare what the Gateway got with what was spoken. In realtime mode the provider's
server VAD and the user's words are upstream's (`talk_relay_user`).
"""

import asyncio
import base64
import time
import uuid

from .codec import now_ms
from .talk_audio import AudioError, UplinkDecoder, best_correlation, envelope, read_wav, rms
from .talk_relay_marks import PlaybackMarks
from .talk_relay_user import RealtimeUser, UserTurn, fragments

MAX_AUDIO_BASE64 = 512 * 1024
MAX_IN_FLIGHT = 4
SESSIONS_PER_CONNECTION = 2
SPEECH_RMS = 400.0
# Finished turns whose decoded audio is kept (`relay-turns` dumps and correlates it); older turns keep their
# record without it, so a long soak's relay holds minutes of audio, not hours (24 kHz PCM16: ~1.4 MB a minute).
TURNS_WITH_AUDIO = 32

DEFAULT_SETTINGS = {
    "era": "unified",             # unified | transitional | legacy (fact sheet §9.8)
    "ready": True,                # relay not ready: catalog says so and create is UNAVAILABLE
    "catalogOmitsReady": False,   # talk.catalog without `ready` (older Gateways omit it; readiness unverified)
    "transcriptionContract": {"encoding": "g711_ulaw", "sampleRateHz": 8000},
    "realtimeContract": {"encoding": "pcm16", "sampleRateHz": 24000},
    "finalDelayMs": 0,            # slow final
    "finalDelaysMs": [],          # per final, first used first (then finalDelayMs)
    "errorAfterAppends": 0,       # error mid-utterance after this many appends of a turn
    "appendDelayMs": 0,           # hold each append's answer (in-flight checks)
    "silenceMs": 800,             # received silence that ends a turn (providers' endpointing)
    "idleMs": 0,                  # end a turn when no audio arrives this long (0: never, as providers)
    "drainMs": 5000,
    "ttlMs": 30 * 60 * 1000,
    "texts": [],                  # finals' texts, first used first; then `text`; then the clip index
    "text": None,
    "partialEveryMs": 300,
    "reply": "you said {text}",   # realtime: what the voice answers
    "toolCall": None,             # realtime: {name, args} asked before answering
    "toolCallCopies": 1,          # realtime: the tool call asked this many times at once (a client's limit)
    "markStrategy": "transport",  # realtime: who acknowledges the provider's playback marks (talk_relay_marks)
    "interruptResponseOnInputAudio": True,   # realtime: the provider's server VAD clears the answer (upstream's)
    "userTranscripts": "streaming",          # realtime: when the user's words come (talk_relay_user.USER_TRANSCRIPTS)
    "vadStartMs": 100,                       # realtime: loud audio in a row that starts speech (the VAD)
    "audioPace": 0.5,             # realtime: send output at twice real time
    "audioGapMs": 0,              # realtime: a pause in the answer's audio after its first chunk (0: none)
}
ERAS = ("unified", "transitional", "legacy")


class RelayState:
    """Settings, sessions and records of every relay on one Gateway."""

    def __init__(self, clip_index=None):
        self.settings = dict(DEFAULT_SETTINGS)
        self.settings["texts"] = []
        self.settings["finalDelaysMs"] = []
        self.sessions = {}        # id -> session
        self.turns = []           # finished turns, oldest first
        self.log = []             # marks acked, cancels, tool calls and results, limit hits
        self.in_flight = {}       # connId -> appends being answered
        self.max_in_flight = {}   # connId -> highest seen
        self.clip_index = clip_index

    def record(self, kind, **fields):
        entry = {"kind": kind, "ts": now_ms()}
        entry.update(fields)
        self.log.append(entry)
        return entry

    def next_text(self, samples, rate):
        """(text, source) of a final."""
        if self.settings["texts"]:
            return self.settings["texts"].pop(0), "configured"
        if self.settings["text"] is not None:
            return self.settings["text"], "configured"
        if self.clip_index is not None:
            match = self.clip_index.match(samples, rate)
            if match:
                return match[1], "clip:" + match[0]
        return "", "none"

    def release_old_audio(self):
        """Drops the decoded audio of all but the newest `TURNS_WITH_AUDIO` turns."""
        for turn in self.turns[:-TURNS_WITH_AUDIO]:
            if turn.get("samples"):
                turn["samples"] = []
                turn["audioReleased"] = True

    def of_connection(self, conn_id):
        return [s for s in self.sessions.values() if s.conn.conn_id == conn_id and not s.closing]


class Turn:
    def __init__(self, index, vad_start_ms=DEFAULT_SETTINGS["vadStartMs"]):
        self.turn_id = str(uuid.uuid4())
        self.index = index
        self.samples = []
        self.appends = 0
        self.bytes = 0
        self.max_base64 = 0
        self.speech = False
        self.silent_ms = 0
        self.next_partial_ms = 0
        self.started_ms = now_ms()
        self.user = UserTurn(vad_start_ms)   # realtime: the user as the provider hears them


class RelaySession(RealtimeUser, PlaybackMarks):
    """One relay session; `legacy` sessions speak the old event names without `talkEvent`."""

    def __init__(self, gateway, conn, mode, legacy):
        relay = gateway.talk_relay
        s = relay.settings
        contract = s["transcriptionContract" if mode == "transcription" else "realtimeContract"]
        self.gateway, self.relay, self.conn, self.mode, self.legacy = gateway, relay, conn, mode, legacy
        self.session_id = str(uuid.uuid4())
        self.encoding, self.rate = contract["encoding"], int(contract["sampleRateHz"])
        self.decoder = UplinkDecoder(self.encoding, self.rate)
        self.expires_ms = now_ms() + int(s["ttlMs"])
        self.turn = None
        self.turns = 0
        self.seq = 0
        self.closing = False
        self.closed = False
        self._idle = None
        self.output = None        # realtime: the answer being played {turnId, cancelled}
        self.tool_waits = {}      # callId -> future of the submitted result
        self.tool_calls = {}      # callId -> (tool name, steers before it was called)
        self.steers = 0           # talk.session.steer requests for this session
        self.marks = 0            # playback marks made (their names count up: `PlaybackMarks`)
        self.pending_marks = []   # marks sent to the client and not acknowledged yet, oldest first
        self._expiry = gateway.spawn(self._expire_later())

    @property
    def id_key(self):
        return "transcriptionSessionId" if self.mode == "transcription" else "relaySessionId"

    @property
    def event_name(self):
        if not self.legacy:
            return "talk.event"
        return "talk.transcription.relay" if self.mode == "transcription" else "talk.realtime.relay"

    def audio(self):
        if self.mode == "transcription":
            return {"inputEncoding": self.encoding, "inputSampleRateHz": self.rate}
        return {"inputEncoding": self.encoding, "inputSampleRateHz": self.rate,
                "outputEncoding": "pcm16", "outputSampleRateHz": 24000}

    async def emit(self, kind, fields=None, talk_type=None, turn_id=None, final=None, talk_payload=None):
        if self.closed or self.conn.ws.close_code is not None:
            return
        payload = {self.id_key: self.session_id, "type": kind}
        payload.update(fields or {})
        if talk_type and not self.legacy:
            self.seq += 1
            envelope_ = {"id": str(uuid.uuid4()), "type": talk_type, "sessionId": self.session_id,
                         "seq": self.seq, "timestamp": now_ms(), "mode": self.mode,
                         "transport": "gateway-relay",
                         "brain": "none" if self.mode == "transcription" else "agent-consult",
                         "provider": "refgw", "payload": talk_payload or {}}
            if turn_id:
                envelope_["turnId"] = turn_id
            if final is not None:
                envelope_["final"] = final
            payload["talkEvent"] = envelope_
        try:
            await self.conn.send_event(self.event_name, payload)
        except Exception:  # the socket went away: the session goes with it
            self.closed = True

    # -- input ---------------------------------------------------------------------------------

    async def append(self, audio_base64):
        """Decodes one append and advances the turn; raises AudioError for audio that is not."""
        try:
            payload = base64.b64decode(audio_base64, validate=True)
        except ValueError:
            raise AudioError("audio frame is invalid base64")
        samples = self.decoder.decode(payload)
        s = self.relay.settings
        if self.turn is None:
            self.turns += 1
            self.turn = Turn(self.turns, int(s["vadStartMs"]))
            if self.mode == "transcription":
                await self.emit("speechStart", None, "turn.started", self.turn.turn_id)
        turn = self.turn
        turn.appends += 1
        turn.bytes += len(payload)
        turn.max_base64 = max(turn.max_base64, len(audio_base64))
        turn.samples.extend(samples)
        await self.emit("inputAudio", {"byteLength": len(payload)}, "input.audio.delta", turn.turn_id)
        window = max(1, self.rate // 50)
        base = len(turn.samples) - len(samples)
        for start in range(0, len(samples) - window + 1, window):
            loud = rms(samples[start:start + window]) >= SPEECH_RMS
            if loud:
                turn.speech, turn.silent_ms = True, 0
            else:
                turn.silent_ms += 20
            if self.mode == "realtime" and turn.user.window(loud, base + start, window, self.rate // 10):
                await self.provider_heard_speech(turn)
        if self.mode == "realtime":
            await self.user_words(turn)
        heard_ms = len(turn.samples) * 1000 // self.rate
        if self.mode == "transcription" and turn.speech and heard_ms >= turn.next_partial_ms:
            turn.next_partial_ms = heard_ms + int(s["partialEveryMs"])
            await self.emit("partial", {"text": "(%d ms heard)" % heard_ms}, "transcript.delta",
                            turn.turn_id)
        if s["errorAfterAppends"] and turn.appends >= int(s["errorAfterAppends"]):
            await self.fail("the refgw relay failed mid-utterance (fault)")
            return
        # A realtime provider's server VAD commits (and answers) only speech it heard start: OpenAI's server_vad
        # sends speech_started, then speech_stopped after the silence, and creates the response on that commit
        # (extensions/openai/realtime-voice-provider.ts, turn_detection with create_response).
        if self.spoke(turn) and turn.silent_ms >= int(s["silenceMs"]):
            self.end_turn()
        else:
            self._arm_idle()

    def speech_start_ms(self, turn):
        """Realtime: where in the turn the provider's VAD heard speech start (its pre-roll included), the audio a
        provider commits and transcribes; None when it heard none, and in transcription mode."""
        if self.mode != "realtime" or turn.user.speech_sample is None:
            return None
        return turn.user.speech_sample * 1000 // self.rate

    def spoke(self, turn):
        """Whether the turn holds speech that ends it after the silence (realtime: speech the VAD heard start)."""
        return turn.user.speech_started if self.mode == "realtime" else turn.speech

    def _arm_idle(self):
        if self._idle:
            self._idle.cancel()
            self._idle = None
        if int(self.relay.settings["idleMs"]) <= 0:
            return
        turn = self.turn

        async def idle():
            await asyncio.sleep(int(self.relay.settings["idleMs"]) / 1000)
            if self.turn is turn and self.spoke(turn):
                self.end_turn()
        self._idle = self.gateway.spawn(idle())

    def end_turn(self):
        """Closes the open turn; its final follows (after `finalDelayMs`)."""
        turn, self.turn = self.turn, None
        if self._idle:
            self._idle.cancel()
            self._idle = None
        if turn is None:
            return None
        return self.gateway.spawn(self._finish(turn))

    async def _finish(self, turn):
        delays = self.relay.settings["finalDelaysMs"]
        delay = int(delays.pop(0)) if delays else int(self.relay.settings["finalDelayMs"])
        if delay:
            await asyncio.sleep(delay / 1000)
        if self.closed:
            return
        # Matching a clip is pure-Python work over the whole corpus: off the loop, so appends stay answered.
        text, source = await asyncio.to_thread(self.relay.next_text, turn.samples, self.rate)
        self.relay.turns.append({
            "sessionId": self.session_id, "mode": self.mode, "turnId": turn.turn_id,
            "encoding": self.encoding, "sampleRateHz": self.rate, "appends": turn.appends,
            "bytes": turn.bytes, "maxAppendBase64": turn.max_base64,
            "durationMs": len(turn.samples) * 1000 // self.rate, "text": text, "source": source,
            "finalAtMs": now_ms(), "samples": turn.samples, "connId": self.conn.conn_id,
            "speechStartMs": self.speech_start_ms(turn)})
        self.relay.release_old_audio()
        if self.mode == "transcription":
            await self.emit("transcript", {"text": text, "final": True}, "transcript.done",
                            turn.turn_id, True)
            await self.emit("transcript", {"text": "", "final": True}, "turn.ended", turn.turn_id, True)
        else:
            timing = self.relay.settings["userTranscripts"]
            if timing == "late":
                await self.answer(text)
            if timing in ("after", "late"):
                for fragment in fragments(text):
                    await self.user_transcript(turn, fragment, False)
            await self.user_transcript(turn, text, True)
            if timing != "late":
                await self.answer(text)

    async def fail(self, message):
        self.relay.record("relay-error", sessionId=self.session_id, message=message)
        await self.emit("error", {"message": message}, "session.error")
        await self.emit("close", {"reason": "error"}, "session.closed")
        self.forget()

    async def close(self):
        """`close`: commits an open turn and drains for `drainMs` before the `close` event."""
        if self.closing:
            return
        self.closing = True
        self.relay.record("closed", sessionId=self.session_id, mode=self.mode, marksPending=len(self.pending_marks))
        if self.mode == "transcription" and self.turn is not None:
            await self.emit("transcript", {"text": "", "final": True}, "input.audio.committed",
                            self.turn.turn_id, True)
            finishing = self.end_turn()

            async def drain():
                try:
                    await asyncio.wait_for(asyncio.shield(finishing), int(self.relay.settings["drainMs"]) / 1000)
                except asyncio.TimeoutError:
                    pass
                await self.emit("close", {"reason": "completed"}, "session.closed")
                self.forget()
            self.gateway.spawn(drain())
            return
        if self.output:
            self.output["cancelled"] = True
        await self.emit("close", {"reason": "completed"}, "session.closed")
        self.forget()

    def forget(self):
        self.closing = True
        self.closed = True
        self.relay.sessions.pop(self.session_id, None)
        for task in (self._idle, self._expiry):
            if task and task is not asyncio.current_task():
                task.cancel()

    async def _expire_later(self):
        await asyncio.sleep(max(0, self.expires_ms - now_ms()) / 1000)
        await self.expire()

    async def expire(self):
        self.relay.record("expired", sessionId=self.session_id)
        await self.emit("close", {"reason": "completed"}, "session.closed")
        self.forget()

    # -- realtime output -----------------------------------------------------------------------

    async def answer(self, heard):
        """Speaks a reply to one user turn: a tool call first when scripted, then PCM16 audio."""
        from .talk_voice import make_clip
        s = self.relay.settings
        turn_id = str(uuid.uuid4())
        output = {"turnId": turn_id, "cancelled": False, "startedMs": now_ms()}
        self.output = output
        reply = str(s["reply"]).replace("{text}", heard or "nothing")
        if s["toolCall"]:
            futures = []
            for _ in range(max(1, int(s.get("toolCallCopies") or 1))):
                call_id = "call-" + uuid.uuid4().hex[:12]
                future = asyncio.get_running_loop().create_future()
                self.tool_waits[call_id] = future
                futures.append(future)
                call = s["toolCall"]
                self.tool_calls[call_id] = (call.get("name", "openclaw_agent_consult"), self.steers)
                self.relay.record("tool-call", sessionId=self.session_id, callId=call_id,
                                  name=call.get("name"))
                await self.emit("toolCall", {"itemId": "item-" + call_id, "callId": call_id,
                                             "name": call.get("name", "openclaw_agent_consult"),
                                             "args": call.get("args", {})}, "tool.call", turn_id)
            results = []
            for future in futures:
                try:
                    results.append(await asyncio.wait_for(future, 60))
                except asyncio.TimeoutError:
                    results.append({"error": "no tool result"})
            # The first result that is an answer speaks (copies refused by a client's limit carry an error).
            result = next((r for r in results if isinstance(r, dict) and "error" not in r), results[0])
            # A consult's result is {text} (or {error}); a control's is the steer result, spoken by its message.
            reply = str(result.get("text") or result.get("message") or result.get("error") or reply) \
                if isinstance(result, dict) else str(result)
        await self.emit("transcript", {"role": "assistant", "text": reply, "final": True},
                        "output.text.done", turn_id, True)
        pcm, _ = await make_clip(reply, "pcm_24000")
        chunk = 4800   # 100 ms at 24 kHz
        item = "item-" + turn_id[:8]
        for start in range(0, len(pcm), chunk):
            if output["cancelled"] or self.closed:
                return
            await self.emit("audio", {"audioBase64": base64.b64encode(pcm[start:start + chunk]).decode(),
                                      "itemId": item, "responseId": "resp-" + turn_id[:8]},
                            "output.audio.delta", turn_id)
            await self.playback_mark(turn_id)
            await asyncio.sleep(0.1 * float(s["audioPace"]))
            if start == 0 and int(s["audioGapMs"]) > 0:
                # A test knob: a loaded Gateway or a slow network holds the rest of the answer back this long.
                await asyncio.sleep(int(s["audioGapMs"]) / 1000)
        if output["cancelled"] or self.closed:
            return
        # The response's end is `audioDone` (session-create.ts `onResponseDone`); no mark follows it.
        await self.emit("audioDone", {"itemId": item, "responseId": "resp-" + turn_id[:8]},
                        "output.audio.done", turn_id)
        self.relay.record("answered", sessionId=self.session_id, turnId=turn_id, text=reply,
                          audioBytes=len(pcm), marks=output.get("marks", 0))
        output["done"] = True

    async def cancel_output(self, turn_id, reason):
        output = self.output
        if output is None or output.get("done") or output["cancelled"]:
            status = "idle"
        elif turn_id and turn_id != output["turnId"]:
            status = "stale"
        else:
            output["cancelled"] = True
            status = "applied"
        self.relay.record("cancel", sessionId=self.session_id, turnId=turn_id, reason=reason,
                          status=status)
        if status == "applied":
            self.truncate_marks()
            await self.emit("clear", None, "turn.cancelled", output["turnId"])
        return {"ok": True, "status": status, **({"turnId": output["turnId"]} if output else {})}


def correlation_with(turn, reference_path):
    """Loudness-envelope correlation of a received turn with a reference WAV."""
    samples, rate = read_wav(reference_path)
    value, lag = best_correlation(envelope(turn["samples"], turn["sampleRateHz"]),
                                  envelope(samples, rate))
    return round(value, 4), lag


def monotonic_ms():
    return int(time.monotonic() * 1000)
