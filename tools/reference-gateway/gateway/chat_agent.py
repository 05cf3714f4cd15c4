"""A scripted agent behind `chat.send`, `chat.history`, `chat.abort` and `talk.config`.

It runs no model: each accepted transcript starts a run that plays the current script (streamed
deltas then `final`; or `replace` deltas, an `error`, an `aborted`, a silent stall that only writes
the reply into the history). Tests drive it through the control commands in `chat_control.py` and
read back every accepted transcript to assert "delivered exactly once".
"""

import asyncio
import uuid

from . import chat_attachments
from .codec import dumps, now_ms
from .errors import error_shape

# method -> (required operator scope, roles allowed); merged into METHOD_GATES.
CHAT_GATES = {
    "chat.history": ("operator.read", ("operator",)),
    "chat.abort": ("operator.write", ("operator",)),
    "talk.config": ("operator.read", ("operator",)),
}

MODES = ("reply", "replace", "error", "aborted", "stall", "manual")
ACK_MODES = ("normal", "drop", "restart", "hold", "forget")
ERROR_KINDS = ("refusal", "timeout", "rate_limit", "context_length", "unknown")

DEFAULT_SCRIPT = {
    "reply": "echo: {message}",   # {message} is the transcript
    "chunkChars": 8,              # characters per delta...
    "maxDeltas": 16,              # ...made larger when a long reply would need more deltas
    "delayMs": 30,                # before each event
    "mode": "reply",
    "snapshots": True,            # deltas also carry the cumulative `message`, as Gateways do
    "replaceWith": "replaced: {message}",
    "errorKind": "unknown",
    "errorMessage": "the scripted agent failed",
    "stallMs": 100,               # stall: the reply lands in the history after this, no events
    "envelope": False,            # the reply as a Talk response envelope: {"response": ..., "display": ...}
    "firstDelayMs": 0,            # extra wait before the run's first event (a tool-using run)
}

DEFAULT_TALK_CONFIG = {
    "talk": {"provider": "elevenlabs",
             "providers": {"elevenlabs": {"voiceId": "refgw-voice", "modelId": "eleven_v3",
                                          "outputFormat": "pcm_24000"}},
             "resolved": {"provider": "elevenlabs", "config": {"voiceId": "refgw-voice", "modelId": "eleven_v3",
                                                                "outputFormat": "pcm_24000"}},
             # As src/config/talk.ts buildTalkConfigResponse serves a configured `talk.realtime`.
             "realtime": {"provider": "refgw", "mode": "realtime", "transport": "gateway-relay",
                          "brain": "agent-consult",
                          "providers": {"refgw": {"model": "refgw-realtime-1", "voice": "refgw-marin"}}},
             "speechLocale": "en-US", "interruptOnSpeech": True, "silenceTimeoutMs": 900},
    "session": {"mainKey": "main"},
}


def _text_message(text, role="assistant"):
    return {"role": role, "content": [{"type": "text", "text": text}], "timestamp": now_ms()}


def _chunks(text, size, most):
    size = max(1, int(size), -(-len(text) // max(1, int(most))))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _wants_chat(conn):
    from .methods import scope_satisfied  # methods imports this module
    return conn.role == "operator" and scope_satisfied(conn.scopes, "operator.read")


class Run:
    """One agent run started by an accepted transcript."""

    def __init__(self, run_id, session_key, message, script):
        self.run_id = run_id
        self.session_key = session_key
        self.message = message
        self.script = script
        self.seq = 0
        self.text = ""
        self.status = "running"   # running | final | aborted | error | timeout | stalled
        self.task = None
        self.timeout_ms = None    # chat.send's timeoutMs: it caps the whole run (chat.ts timeoutOverrideMs)


class ChatAgent:
    """Runs, transcripts, history and the Talk config; lives on the Gateway's loop."""

    def __init__(self, gateway):
        self.gateway = gateway
        self.script = dict(DEFAULT_SCRIPT)
        self.ack_fault = {"mode": "normal", "count": 0, "downMs": 500}
        self.replay_status = None   # chat-ack replayStatus: the label resends of finished runs get
        self.release = asyncio.Event()
        self.release.set()
        self.runs = {}           # (sessionKey, idempotencyKey) -> Run
        self.runs_by_id = {}
        self.transcripts = []    # every accepted chat.send, in order
        self.sends = {}          # (sessionKey, idempotencyKey) -> chat.send requests seen
        self.history = {}        # sessionKey -> rows
        self.talk_config = DEFAULT_TALK_CONFIG
        self.talk_config_mode = "normal"   # normal | error | absent
        self.session_defaults = True       # hello-ok snapshot.sessionDefaults present

    def handler(self, method):
        """The coroutine function serving `method`, or None."""
        return {"chat.send": self.chat_send, "chat.history": self.chat_history,
                "chat.abort": self.chat_abort, "talk.config": self.get_talk_config}.get(method)

    # -- chat.send -----------------------------------------------------------------------------

    async def chat_send(self, conn, params):
        attachments = chat_attachments.check(params, chat_attachments.policy(self.gateway.options))
        session_key, key = str(params.get("sessionKey")), str(params.get("idempotencyKey"))
        self.sends[(session_key, key)] = self.sends.get((session_key, key), 0) + 1
        run = self.runs.get((session_key, key))
        if run is not None:   # a resend: the original run, never a second transcript
            return {"runId": run.run_id, "status": self._replayed_status(run)}
        message = str(params.get("message", ""))
        run = Run(str(uuid.uuid4()), session_key, message, dict(self.script))
        if isinstance(params.get("timeoutMs"), int):
            run.timeout_ms = params["timeoutMs"]
        self.runs[(session_key, key)] = run
        self.runs_by_id[run.run_id] = run
        if self._forgets():   # a test knob, no upstream behaviour: this request is run and acked but not recorded
            run.task = self.gateway.spawn(self._play(run))
            return {"runId": run.run_id, "status": "started"}
        self.transcripts.append({"sessionKey": session_key, "idempotencyKey": key,
                                 "message": message, "runId": run.run_id,
                                 "acceptedAtMs": now_ms(), "timeoutMs": run.timeout_ms,
                                 "attachments": attachments})
        self.history.setdefault(session_key, []).append(_text_message(message, "user"))
        run.task = self.gateway.spawn(self._play(run))
        await self._ack_fault(conn)
        return {"runId": run.run_id, "status": "started"}

    def _replayed_status(self, run):
        """A resend's ack: the stored result for the idempotency key (chat.ts): `in_flight` while the run plays,
        then `ok` (`completed` on newer Gateways), `timeout`, `error` or `aborted`; each after the run is final.
        `chat-ack replayStatus` labels every finished run's replay (tests of each shape)."""
        if run.status == "running":
            return "in_flight"
        if self.replay_status:   # a test knob: any finished run's replay under this label
            return self.replay_status
        if run.status in ("final", "stalled"):
            return "ok"
        return run.status   # timeout | error | aborted

    def _forgets(self):
        """`chat-ack forget`: the next `count` requests are left out of `chat-transcripts` (bench soak's check that a
        request the Gateway never recorded is counted lost)."""
        fault = self.ack_fault
        if fault["mode"] != "forget" or fault["count"] <= 0:
            return False
        fault["count"] -= 1
        if fault["count"] <= 0:
            fault["mode"] = "normal"
        return True

    async def _ack_fault(self, conn):
        """Loses or delays the ack of a recorded transcript when a test asked for it."""
        fault = self.ack_fault
        if fault["mode"] == "hold":
            await self.release.wait()
            return
        if fault["mode"] in ("normal", "forget") or fault["count"] <= 0:
            return
        fault["count"] -= 1
        if fault["mode"] == "drop":
            conn.ws.transport.abort()   # like a network failure: no close frame, no ack
        else:   # spawned: restarting waits for every handler to end, this one included
            self.gateway.spawn(self.gateway.restart(int(fault["downMs"])))
        if fault["count"] <= 0:
            fault["mode"] = "normal"
        try:   # the ack then fails to send and goes nowhere
            await asyncio.wait_for(conn.ws.wait_closed(), 10)
        except asyncio.TimeoutError:
            self.gateway.log("chat-ack %s: the connection did not close" % fault["mode"])

    # -- the scripted run ----------------------------------------------------------------------

    async def _play(self, run):
        if run.timeout_ms is None:
            return await self._play_script(run)
        # chat.send's timeoutMs overrides the whole agent run's budget (chat.ts `timeoutOverrideMs: p.timeoutMs`):
        # a run still going then ends with an error of kind timeout.
        playing = asyncio.ensure_future(self._play_script(run))
        try:
            done, _ = await asyncio.wait({playing}, timeout=max(0, run.timeout_ms) / 1000)
        except asyncio.CancelledError:
            playing.cancel()   # chat.abort: the script ends the run as aborted
            raise
        if done:
            return
        run.status = "timeout"
        playing.cancel()
        await self._emit(run, "error", errorKind="timeout",
                         errorMessage="agent run timed out after %d ms" % run.timeout_ms)

    async def _play_script(self, run):
        script = run.script
        delay = max(0, int(script["delayMs"])) / 1000
        reply = str(script["reply"]).replace("{message}", run.message)
        if script.get("envelope"):
            # How an agent answers a Talk client in envelope form (TalkResponseEnvelope.swift): only `response`
            # is meant to be spoken.
            reply = dumps({"response": reply, "display": "(shown, not spoken) " + reply, "status": "ok"})
        try:
            if int(script.get("firstDelayMs") or 0) > 0:
                await asyncio.sleep(int(script["firstDelayMs"]) / 1000)
            mode = script["mode"]
            if mode == "manual":
                return   # the test sends this run's events with chat-event
            if mode == "stall":
                await asyncio.sleep(max(0, int(script["stallMs"])) / 1000)
                run.status = "stalled"
                self._remember(run, reply)
                return
            if mode == "error":
                await asyncio.sleep(delay)
                run.status = "error"
                await self._emit(run, "error", errorKind=script["errorKind"],
                                 errorMessage=script["errorMessage"])
                return
            for chunk in _chunks(reply, script["chunkChars"], script["maxDeltas"]):
                await asyncio.sleep(delay)
                await self._delta(run, chunk, replace=False)
            if mode == "aborted":
                await asyncio.sleep(delay)
                await self._finish_aborted(run, "scripted")
                return
            if mode == "replace":
                await asyncio.sleep(delay)
                await self._delta(run, str(script["replaceWith"]).replace("{message}", run.message),
                                  replace=True)
            await asyncio.sleep(delay)
            run.status = "final"
            self._remember(run, run.text)
            await self._emit(run, "final", message=_text_message(run.text), stopReason="stop")
        except asyncio.CancelledError:
            if run.status == "running":
                await self._finish_aborted(run, "abort")
            raise

    async def _delta(self, run, text, replace):
        run.text = text if replace else run.text + text
        extra = {"deltaText": text}
        if replace:
            extra["replace"] = True
        if run.script["snapshots"]:
            extra["message"] = _text_message(run.text)
        await self._emit(run, "delta", **extra)

    async def _finish_aborted(self, run, reason):
        run.status = "aborted"
        await self._emit(run, "aborted", message=_text_message(run.text), stopReason=reason)

    async def _emit(self, run, state, **fields):
        payload = {"runId": run.run_id, "sessionKey": run.session_key, "seq": run.seq,
                   "state": state}
        payload.update(fields)
        run.seq += 1
        await self.gateway.broadcast("chat", payload, want=_wants_chat)

    def _remember(self, run, text):
        self.history.setdefault(run.session_key, []).append(_text_message(text))

    # -- chat.history, chat.abort, talk.config -------------------------------------------------

    async def chat_history(self, conn, params):
        rows = self.history.get(str(params.get("sessionKey")), [])
        limit = params.get("limit") if isinstance(params.get("limit"), int) else 200
        return {"sessionKey": params.get("sessionKey"), "messages": rows[-limit:]}

    async def chat_abort(self, conn, params):
        session_key, run_id = str(params.get("sessionKey")), params.get("runId")
        aborted = []
        for run in list(self.runs_by_id.values()):
            if run.session_key == session_key and run.status == "running" \
                    and run_id in (None, run.run_id) and run.task is not None:
                run.task.cancel()
                aborted.append(run.run_id)
        return {"ok": True, "aborted": bool(aborted), "runIds": aborted}

    async def get_talk_config(self, conn, params):
        from .methods import MethodError  # methods imports this module
        if self.talk_config_mode == "absent":
            raise MethodError(error_shape("INVALID_REQUEST", "unknown method: talk.config"))
        if self.talk_config_mode == "error":
            raise MethodError(error_shape("UNAVAILABLE", "talk config is not available"))
        return {"config": self.talk_config}

    # -- control -------------------------------------------------------------------------------

    async def inject(self, payload, raw=None):
        """Sends a `chat` event (any payload, or raw text) to operator readers, unchecked."""
        count = 0
        for conn in [c for c in list(self.gateway.connections.values())
                     if c.authenticated and _wants_chat(c)]:
            conn.seq += 1
            text = raw if raw is not None else dumps(
                {"type": "event", "event": "chat", "payload": payload, "seq": conn.seq})
            await conn.ws.send(text)
            count += 1
        return count
