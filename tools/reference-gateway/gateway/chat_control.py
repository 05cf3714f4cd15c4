"""Control commands of the scripted chat agent (a mixin of ControlServer)."""

from .chat_agent import ACK_MODES, DEFAULT_SCRIPT, ERROR_KINDS, MODES


class ChatControlCommands:
    """`chat-*` and `talk-config` commands; `self.gateway.methods.chat` is the agent. A ValueError
    becomes the reply's `error`."""

    @property
    def _chat(self):
        return self.gateway.methods.chat

    async def cmd_chat_script(self, args):
        agent = self._chat
        if args.get("reset"):
            agent.script = dict(DEFAULT_SCRIPT)
        unknown = set(args) - set(DEFAULT_SCRIPT) - {"reset"}
        if unknown:
            raise ValueError("chat-script does not know %s" % ", ".join(sorted(unknown)))
        if args.get("mode", agent.script["mode"]) not in MODES:
            raise ValueError("chat-script mode is one of %s" % ", ".join(MODES))
        if args.get("errorKind", agent.script["errorKind"]) not in ERROR_KINDS:
            raise ValueError("chat-script errorKind is one of %s" % ", ".join(ERROR_KINDS))
        agent.script.update({k: v for k, v in args.items() if k in DEFAULT_SCRIPT})
        return {"script": dict(agent.script)}

    async def cmd_chat_ack(self, args):
        agent = self._chat
        mode = str(args.get("mode", "normal"))
        if mode not in ACK_MODES:
            raise ValueError("chat-ack mode is one of %s" % ", ".join(ACK_MODES))
        agent.ack_fault = {"mode": mode, "count": int(args.get("count", 1)),
                           "downMs": int(args.get("downMs", 500))}
        if "replayStatus" in args:
            agent.replay_status = args["replayStatus"] or None
        if mode == "hold":
            agent.release.clear()
        else:
            agent.release.set()
        return {"ack": dict(agent.ack_fault)}

    async def cmd_chat_release(self, args):
        agent = self._chat
        agent.ack_fault = {"mode": "normal", "count": 0, "downMs": 500}
        agent.replay_status = None
        agent.release.set()
        return {}

    async def cmd_chat_transcripts(self, args):
        agent = self._chat
        out = []
        for t in agent.transcripts:
            run = agent.runs_by_id[t["runId"]]
            out.append(dict(t, status=run.status,
                            sends=agent.sends.get((t["sessionKey"], t["idempotencyKey"]), 0)))
        return {"transcripts": out}

    async def cmd_chat_event(self, args):
        if "payload" not in args and "raw" not in args:
            raise ValueError("chat-event needs payload or raw")
        return {"sent": await self._chat.inject(args.get("payload"), args.get("raw"))}

    async def cmd_chat_history_add(self, args):
        if not args.get("sessionKey") or "row" not in args:
            raise ValueError("chat-history-add needs sessionKey and row")
        self._chat.history.setdefault(args["sessionKey"], []).append(args["row"])
        return {}

    async def cmd_session_defaults(self, args):
        self._chat.session_defaults = str(args.get("mode", "on")) == "on"
        return {"sessionDefaults": self._chat.session_defaults}

    async def cmd_talk_config(self, args):
        agent = self._chat
        mode = str(args.get("mode", "normal"))
        if mode not in ("normal", "error", "absent"):
            raise ValueError("talk-config mode is one of normal, error, absent")
        if "config" in args:
            agent.talk_config = args["config"]
        agent.talk_config_mode = mode
        return {"config": agent.talk_config, "mode": mode}
