"""Talk relay methods in both naming eras (fact sheet §5.1, §9.1-9.8), a mixin of `Methods`."""

import asyncio
import uuid

from .errors import error_shape
from .talk_audio import AudioError
from .talk_relay import (ERAS, MAX_AUDIO_BASE64, MAX_IN_FLIGHT, SESSIONS_PER_CONNECTION,
                         RelaySession)
from .talk_relay_schema import param_errors

_TALK = ("operator.talk", ("operator",))
_WRITE = ("operator.write", ("operator",))
UNIFIED = ["talk.catalog", "talk.session.create", "talk.session.appendAudio",
           "talk.session.cancelOutput", "talk.session.acknowledgeMark",
           "talk.session.submitToolResult", "talk.session.steer", "talk.session.close",
           "talk.client.toolCall"]
# The relay's two tools (openclaw/openclaw src/gateway/talk-session.ts): consult goes through
# talk.client.toolCall, control through talk.session.steer (apps/shared/OpenClawKit RealtimeTalkRelaySession.swift).
CONSULT_TOOL, CONTROL_TOOL = "openclaw_agent_consult", "openclaw_agent_control"
LEGACY = ["talk.realtime.session", "talk.realtime.relayAudio", "talk.realtime.relayMark",
          "talk.realtime.relayStop", "talk.realtime.relayToolResult"]
TRANSITIONAL_ONLY = ["talk.realtime.toolCall", "talk.realtime.relayCancel",
                     "talk.transcription.session", "talk.transcription.relayAudio",
                     "talk.transcription.relayCancel", "talk.transcription.relayStop"]
RELAY_GATES = {m: _TALK for m in UNIFIED}
RELAY_GATES["talk.catalog"] = ("operator.read", ("operator",))
RELAY_GATES.update({m: _WRITE for m in LEGACY + TRANSITIONAL_ONLY})
RELAY_EVENTS = ["talk.event", "talk.realtime.relay", "talk.transcription.relay"]
# Answered in a task of their own, so a held answer does not hold the socket (in-flight checks).
CONCURRENT_METHODS = {"talk.session.appendAudio", "talk.realtime.relayAudio",
                      "talk.transcription.relayAudio"}


def era_methods(era):
    return {"unified": UNIFIED, "transitional": UNIFIED + LEGACY + TRANSITIONAL_ONLY,
            "legacy": LEGACY}[era]


def era_events(era):
    return {"unified": ["talk.event"], "transitional": RELAY_EVENTS,
            "legacy": ["talk.realtime.relay"]}[era]


def hidden_relay_methods(era):
    return set(RELAY_GATES) - set(era_methods(era))


def _unavailable(message):
    return error_shape("UNAVAILABLE", message, details={"talkIssue": {
        "code": "realtime_unavailable", "message": message, "phase": "request"}})


class TalkRelayMethods:
    """Handlers; `self.gateway.talk_relay` is the state."""

    def _relay_check(self, conn, method, params):
        from .methods import MethodError
        errors = param_errors(method, params)
        if errors:
            self.gateway.violations.record(conn.conn_id, "schema", {"method": method, "params": params},
                                           errors)
            raise MethodError(error_shape("INVALID_REQUEST", "invalid frame: " + errors[0],
                                          details={"reason": "schema", "errors": errors}))

    def _session(self, conn, session_id, kind=None):
        from .methods import MethodError
        session = self.gateway.talk_relay.sessions.get(session_id)
        if session is None or session.closing:
            label = {"transcription": "Unknown transcription Talk session",
                     "realtime": "Unknown realtime relay session"}.get(kind, "Unknown Talk session")
            raise MethodError(_unavailable(label))
        if session.conn is not conn:
            raise MethodError(_unavailable("Talk session is not owned by this connection"))
        return session

    # -- catalog and create --------------------------------------------------------------------

    async def _talk_catalog(self, conn, params):
        self._relay_check(conn, "talk.catalog", params)
        s = self.gateway.talk_relay.settings
        ready = bool(s["ready"])

        def fmt(contract):
            return {"encoding": contract["encoding"], "sampleRateHz": int(contract["sampleRateHz"]),
                    "channels": 1}
        provider = {"id": "refgw", "label": "refgw scripted relay", "configured": True,
                    "transports": ["gateway-relay"]}
        catalog = {"modes": ["realtime", "transcription"], "transports": ["gateway-relay"],
                   "brains": ["agent-consult", "none"],
                   "speech": {"ready": True, "activeProvider": "refgw", "providers": []},
                   "transcription": {"ready": ready, "activeProvider": "refgw", "providers": [dict(
                       provider, modes=["transcription"], brains=["none"],
                       inputAudioFormats=[fmt(s["transcriptionContract"])])]},
                   "realtime": {"ready": ready, "activeProvider": "refgw", "providers": [dict(
                       provider, modes=["realtime"], brains=["agent-consult"],
                       inputAudioFormats=[fmt(s["realtimeContract"])],
                       outputAudioFormats=[{"encoding": "pcm16", "sampleRateHz": 24000, "channels": 1}],
                       supportsBargeIn=True, supportsToolCalls=True)]}}
        if s["catalogOmitsReady"]:
            # An older Gateway's catalog: no `ready` per mode (docs: readiness is then unknown, not false).
            for key in ("speech", "transcription", "realtime"):
                catalog[key].pop("ready")
        return catalog

    def _realtime_choice(self, params):
        """provider, model and voice of a realtime create: the request's, else talk.config's `talk.realtime`
        (openclaw/openclaw src/gateway/server-methods/talk.ts: `p.provider ?? realtimeConfig.provider`, model and
        voice likewise; a provider no plugin registered is UNAVAILABLE)."""
        from .methods import MethodError
        config = (self.chat.talk_config.get("talk") or {}).get("realtime") or {}
        provider = params.get("provider") or config.get("provider") or "refgw"
        if provider.strip().lower() != "refgw":
            raise MethodError(_unavailable("No realtime voice provider registered for Talk"))
        entry = (config.get("providers") or {}).get(provider) or {}
        return {"provider": provider, "model": params.get("model") or config.get("model") or entry.get("model"),
                "voice": params.get("voice") or config.get("voice") or entry.get("voice"),
                "requested": {k: params[k] for k in ("provider", "model", "voice") if k in params}}

    async def _create(self, conn, mode, legacy, choice=None):
        from .methods import MethodError
        relay = self.gateway.talk_relay
        if not relay.settings["ready"]:
            raise MethodError(_unavailable("No realtime transcription provider registered"
                                           if mode == "transcription" else "realtime relay not ready"))
        if len(relay.of_connection(conn.conn_id)) >= SESSIONS_PER_CONNECTION:
            relay.record("limit", connId=conn.conn_id, what="sessions per connection")
            raise MethodError(_unavailable("Too many active %s Talk sessions for this connection"
                                           % mode))
        try:
            session = RelaySession(self.gateway, conn, mode, legacy)
        except AudioError as failure:
            raise MethodError(_unavailable(str(failure)))
        relay.sessions[session.session_id] = session
        relay.record("created", sessionId=session.session_id, mode=mode, legacy=legacy, **(choice or {}))
        async def ready():   # after the create answer, as a provider connects
            await asyncio.sleep(0.02)
            await session.emit("ready", None, "session.ready")
        self.gateway.spawn(ready())
        return session

    def drop_relay_sessions(self, conn):
        """A socket went away: its relay sessions go with it (fact sheet §5.1)."""
        for session in list(self.gateway.talk_relay.sessions.values()):
            if session.conn is conn:
                session.forget()

    async def _talk_session_create(self, conn, params):
        from .methods import MethodError
        self._relay_check(conn, "talk.session.create", params)
        mode = params.get("mode", "realtime")
        transport = params.get("transport", "gateway-relay")
        if mode == "transcription":
            if transport != "gateway-relay" or params.get("brain", "none") != "none":
                raise MethodError(error_shape("INVALID_REQUEST", 'transcription talk.session.create '
                                              'requires transport="gateway-relay" and brain="none"'))
        elif mode == "realtime":
            if transport != "gateway-relay" or params.get("brain") != "agent-consult":
                raise MethodError(error_shape("INVALID_REQUEST", 'realtime talk.session.create '
                                              'requires transport="gateway-relay" and brain="agent-consult"'))
        else:
            raise MethodError(error_shape("INVALID_REQUEST", "mode %s is not served here" % mode))
        choice = self._realtime_choice(params) if mode == "realtime" else None
        session = await self._create(conn, mode, legacy=False, choice=choice)
        result = {"sessionId": session.session_id, "provider": "refgw", "mode": mode,
                  "transport": "gateway-relay", "audio": session.audio(),
                  "expiresAt": session.expires_ms // 1000}
        if mode == "transcription":
            result.update(transcriptionSessionId=session.session_id, brain="none", ready=False)
        else:
            result.update(relaySessionId=session.session_id, voiceSessionId="voice-" + session.session_id,
                          brain="agent-consult")
        return result

    async def _talk_realtime_session(self, conn, params):
        session = await self._create(conn, "realtime", legacy=True, choice=self._realtime_choice(params))
        return {"provider": "refgw", "transport": "gateway-relay", "relaySessionId": session.session_id,
                "audio": session.audio(), "expiresAt": session.expires_ms // 1000}

    async def _talk_transcription_session(self, conn, params):
        self._relay_check(conn, "talk.transcription.session", params)
        session = await self._create(conn, "transcription", legacy=True)
        return {"transcriptionSessionId": session.session_id, "provider": "refgw",
                "audio": session.audio(), "expiresAt": session.expires_ms // 1000}

    # -- audio ---------------------------------------------------------------------------------

    async def _append(self, conn, session_id, audio_base64, kind=None):
        from .methods import MethodError
        relay = self.gateway.talk_relay
        key = conn.conn_id
        relay.in_flight[key] = relay.in_flight.get(key, 0) + 1
        relay.max_in_flight[key] = max(relay.max_in_flight.get(key, 0), relay.in_flight[key])
        try:
            if relay.in_flight[key] > MAX_IN_FLIGHT:
                relay.record("limit", connId=key, what="appends in flight",
                             inFlight=relay.in_flight[key])
                self.gateway.violations.record(key, "limit", {"sessionId": session_id},
                                               ["more than %d appendAudio requests in flight"
                                                % MAX_IN_FLIGHT])
            if len(audio_base64) > MAX_AUDIO_BASE64:
                relay.record("limit", connId=key, what="append size", size=len(audio_base64))
                self.gateway.violations.record(key, "limit", {"sessionId": session_id},
                                               ["appendAudio of %d base64 bytes (limit %d)"
                                                % (len(audio_base64), MAX_AUDIO_BASE64)])
                raise MethodError(_unavailable("Transcription Talk audio frame is too large"))
            session = self._session(conn, session_id, kind)
            try:
                await session.append(audio_base64)
            except AudioError as failure:
                raise MethodError(_unavailable("Talk audio frame is invalid: %s" % failure))
            delay = int(relay.settings["appendDelayMs"])
            if delay:
                await asyncio.sleep(delay / 1000)
            return {"ok": True}
        finally:
            relay.in_flight[key] -= 1

    async def _talk_session_appendAudio(self, conn, params):
        self._relay_check(conn, "talk.session.appendAudio", params)
        return await self._append(conn, params["sessionId"], params["audioBase64"])

    async def _talk_realtime_relayAudio(self, conn, params):
        return await self._append(conn, params["relaySessionId"], params["audioBase64"], "realtime")

    async def _talk_transcription_relayAudio(self, conn, params):
        self._relay_check(conn, "talk.transcription.relayAudio", params)
        return await self._append(conn, params["transcriptionSessionId"], params["audioBase64"],
                                  "transcription")

    # -- realtime controls ---------------------------------------------------------------------

    async def _talk_session_cancelOutput(self, conn, params):
        from .methods import MethodError
        self._relay_check(conn, "talk.session.cancelOutput", params)
        session = self._session(conn, params["sessionId"])
        if session.mode != "realtime":
            raise MethodError(error_shape("INVALID_REQUEST", "cancelOutput is for realtime sessions"))
        return await session.cancel_output(params.get("turnId"), params.get("reason"))

    async def _talk_realtime_relayCancel(self, conn, params):
        self._relay_check(conn, "talk.realtime.relayCancel", params)
        session = self._session(conn, params["relaySessionId"], "realtime")
        await session.cancel_output(params.get("turnId"), params.get("reason"))
        return {"ok": True}

    async def _talk_session_acknowledgeMark(self, conn, params):
        """The client played through a mark the relay sent it: accepted and passed to the provider, which ignores a
        name it does not hold (openclaw/openclaw src/gateway/talk/handlers/session-mark.ts, relay/operations.ts
        `acknowledgeTalkRealtimeRelayMark`, @8032cf1f); refused for a session that is not a realtime relay."""
        from .methods import MethodError
        self._relay_check(conn, "talk.session.acknowledgeMark", params)
        session = self._session(conn, params["sessionId"])
        if session.mode != "realtime":
            raise MethodError(error_shape("INVALID_REQUEST",
                                          "talk.session.acknowledgeMark requires realtime relay"))
        return self._acknowledge(session, params["markName"])

    async def _talk_realtime_relayMark(self, conn, params):
        session = self._session(conn, params["relaySessionId"], "realtime")
        return self._acknowledge(session, params.get("markName"))

    def _acknowledge(self, session, name):
        outstanding = session.acknowledge_mark(name)
        self.gateway.talk_relay.record("mark-ack", sessionId=session.session_id, markName=name,
                                       outstanding=outstanding, pending=len(session.pending_marks))
        return {"ok": True}

    async def _submit(self, conn, session_id, call_id, result):
        from .methods import MethodError
        session = self._session(conn, session_id, "realtime")
        self.gateway.talk_relay.record("tool-result", sessionId=session_id, callId=call_id,
                                       result=result)
        future = session.tool_waits.pop(call_id, None)
        if future is None:
            raise MethodError(error_shape("INVALID_REQUEST", "unknown tool call %s" % call_id))
        name, steers_then = session.tool_calls.pop(call_id, (None, 0))
        if name == CONTROL_TOOL and session.steers == steers_then:
            # The control tool acts only through talk.session.steer (talk-session.ts): a result without one
            # steered nothing.
            self.gateway.violations.record(conn.conn_id, "protocol", {"callId": call_id},
                                           ["%s answered without talk.session.steer" % CONTROL_TOOL])
        if not future.done():
            future.set_result(result)
        return {"ok": True}

    async def _talk_session_submitToolResult(self, conn, params):
        self._relay_check(conn, "talk.session.submitToolResult", params)
        return await self._submit(conn, params["sessionId"], params["callId"], params["result"])

    async def _talk_realtime_relayToolResult(self, conn, params):
        return await self._submit(conn, params["relaySessionId"], params["callId"], params["result"])

    async def _tool_call(self, conn, params):
        """A consult: a chat run of the scripted agent whose `chat` final the client waits for."""
        if params.get("name") == CONTROL_TOOL:
            self.gateway.violations.record(conn.conn_id, "protocol", {"name": params.get("name")},
                                           ["%s sent as a consult; it goes to talk.session.steer" % CONTROL_TOOL])
        agent = self.chat
        from .chat_agent import Run
        args = params.get("args") or {}
        question = args.get("question") if isinstance(args, dict) else None
        run = Run(str(uuid.uuid4()), str(params.get("sessionKey")), str(question or args),
                  dict(agent.script))
        agent.runs_by_id[run.run_id] = run
        self.gateway.talk_relay.record("consult", callId=params["callId"], runId=run.run_id,
                                       name=params["name"], sessionKey=run.session_key)
        run.task = self.gateway.spawn(agent._play(run))
        return {"runId": run.run_id, "idempotencyKey": "consult-" + params["callId"],
                "agentId": "main", "agentSessionKey": run.session_key}

    async def _talk_client_toolCall(self, conn, params):
        self._relay_check(conn, "talk.client.toolCall", params)
        return await self._tool_call(conn, params)

    async def _talk_realtime_toolCall(self, conn, params):
        self._relay_check(conn, "talk.realtime.toolCall", params)
        return await self._tool_call(conn, params)

    async def _talk_session_steer(self, conn, params):
        """The control tool's verb: status, steer, cancel or follow up the session's agent run (talk-session.ts)."""
        from .methods import MethodError
        self._relay_check(conn, "talk.session.steer", params)
        session = self._session(conn, params["sessionId"])
        if session.mode != "realtime":
            raise MethodError(error_shape("INVALID_REQUEST",
                                          "talk.session.steer requires an agent-backed Talk session"))
        session.steers += 1
        mode = params.get("mode") or "steer"
        session_key = params.get("sessionKey") or "main"
        runs = [r for r in self.chat.runs_by_id.values()
                if r.session_key == session_key and r.task is not None and not r.task.done()]
        self.gateway.talk_relay.record("steer", sessionId=session.session_id, sessionKey=session_key,
                                       text=params["text"], mode=mode, active=bool(runs))
        if mode == "cancel":
            for run in runs:
                run.task.cancel()
        message = ("OpenClaw is working on it." if runs else "No run is active.") if mode == "status" \
            else ("Cancelled." if mode == "cancel" and runs else "Noted: %s" % params["text"])
        # The shape of controlRealtimeVoiceAgentRun's result: {ok, mode, sessionKey, active, message}.
        return {"ok": True, "mode": mode, "sessionKey": session_key, "active": bool(runs), "message": message}

    # -- close ---------------------------------------------------------------------------------

    async def _talk_session_close(self, conn, params):
        self._relay_check(conn, "talk.session.close", params)
        await self._session(conn, params["sessionId"]).close()
        return {"ok": True}

    async def _talk_realtime_relayStop(self, conn, params):
        await self._session(conn, params["relaySessionId"], "realtime").close()
        return {"ok": True}

    async def _talk_transcription_relayStop(self, conn, params):
        self._relay_check(conn, "talk.transcription.relayStop", params)
        await self._session(conn, params["transcriptionSessionId"], "transcription").close()
        return {"ok": True}

    async def _talk_transcription_relayCancel(self, conn, params):
        return await self._talk_transcription_relayStop(conn, params)


def check_era(era):
    if era not in ERAS:
        raise ValueError("era is one of %s" % ", ".join(ERAS))
    return era
