"""The control channel: JSON lines on a loopback TCP port, one reply line per command.

A line is either JSON (`{"cmd": "approve", "requestId": "..."}`) or words
(`approve 1b2c...`, `restart 500`, `reject-signature on`, `send-raw {"text": "..."}`).
Either may start with a tag, `@<tag> `, that the reply carries back as `"controlId": "<tag>"`, so a
client can tell its reply from any other (ReferenceGatewayProcess.control tags every command).
"""

import asyncio
import json
import sys
import traceback

from .approvals import ApprovalControl
from .chat_control import ChatControlCommands
from .codec import dumps
from .faults import SIGNATURE_MODES
from .hostile_frames import KINDS, HostileFrames
from .hostile_setup import HostileSetupControl
from .node_invoke import NodeInvokeControl
from .talk_relay_control import TalkRelayControl
from .talk_voice import TalkVoiceControl

# Positional argument names for the word form, per command.
POSITIONAL = {"approve": ["requestId"], "reject": ["requestId"], "expire": ["requestId"],
              "forget": ["deviceId"], "restart": ["downMs"], "reject-signature": ["mode"],
              "no-challenge": ["mode"], "unavailable": ["count", "retryAfterMs"],
              "fail-connect": ["code", "count"], "rate-limit": ["count", "retryAfterMs"],
              "frames": ["last"], "send-raw": ["text"], "setup-code": ["ttlMs"],
              "fuzz": ["count", "seed"],
              "talk-speak": ["format"],
              "hide-method": ["method"], "show-method": ["method"],
              "chat-ack": ["mode", "count"],
              "talk-config": ["mode"],
              "session-defaults": ["mode"], "upgrade-status": ["status", "reason"],
              "pairing-request-id": ["requestId"], "approvals-unified": ["mode"],
              "approval-resolve": ["id", "decision"]}
INTEGER_ARGS = {"downMs", "count", "retryAfterMs", "last", "ttlMs", "size", "seed", "status"}


TAG_FIELD = "controlId"


def split_tag(line):
    """(tag or None, the command line without it) from one control line (`@<tag> <command>`)."""
    if not line.startswith("@"):
        return None, line
    tag, _, rest = line[1:].partition(" ")
    return tag, rest


class ControlError(Exception):
    """A command that cannot be carried out; its text is the reply's `error`."""


def parse_command(line):
    """(command name, argument dict) from one control line."""
    line = line.strip()
    if line.startswith("{"):
        args = json.loads(line)
        if not isinstance(args, dict) or not isinstance(args.get("cmd"), str):
            raise ControlError('a JSON command needs a "cmd" string')
        return args.pop("cmd"), args
    name, _, rest = line.partition(" ")
    rest = rest.strip()
    if rest.startswith("{"):
        return name, json.loads(rest)
    args = {}
    words = rest.split(None, len(POSITIONAL.get(name, [])) - 1) if rest else []
    for key, word in zip(POSITIONAL.get(name, []), words):
        args[key] = int(word) if key in INTEGER_ARGS else word
    return name, args


class ControlServer(
        TalkVoiceControl,
        TalkRelayControl,
        NodeInvokeControl,
        ChatControlCommands,
        HostileSetupControl,
        ApprovalControl,
):
    """Serves control commands for one Gateway."""

    def __init__(self, gateway, host):
        self.gateway = gateway
        self.host = host
        self.server = None
        self.port = None

    async def start(self, port):
        # Lines up to 8 MiB: `chat-event` may carry a deliberately huge payload.
        self.server = await asyncio.start_server(self._client, self.host, port, limit=8 << 20)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _client(self, reader, writer):
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                if not line.strip():
                    continue
                tag, command = split_tag(line.decode("utf-8", errors="replace").lstrip())
                reply, after = await self.execute(command)
                if tag is not None:
                    reply[TAG_FIELD] = tag
                try:
                    text = dumps(reply)
                except (RecursionError, ValueError):
                    failure = {"ok": False, "error": "reply holds a frame nested too deeply "
                                                     "to encode; use clear-violations"}
                    if tag is not None:
                        failure[TAG_FIELD] = tag
                    text = dumps(failure)
                writer.write((text + "\n").encode("utf-8"))
                await writer.drain()
                if after is not None:
                    await after()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # the Gateway is exiting; the client just sees EOF
        finally:
            writer.close()

    async def execute(self, line):
        """(reply dict, optional coroutine function to run after replying)."""
        try:
            name, args = parse_command(line)
            handler = getattr(self, "cmd_" + name.replace("-", "_"), None)
            if handler is None:
                raise ControlError("unknown command %r (try: help)" % name)
            result = await handler(args)
        except (ControlError, ValueError, KeyError, TypeError) as failure:
            return {"ok": False, "error": str(failure)}, None
        except Exception as failure:  # noqa: BLE001 - a bug in a handler: said to the caller and logged, not an EOF
            traceback.print_exc(file=sys.stderr)
            return {"ok": False, "error": "internal error in %r: %s: %s" % (line.strip()[:80], type(failure).__name__, failure)}, None
        after = result.pop("_after", None) if isinstance(result, dict) else None
        reply = {"ok": True}
        reply.update(result or {})
        return reply, after

    # -- pairing -------------------------------------------------------------------------------

    async def cmd_approve(self, args):
        pairing = self.gateway.pairing
        ids = [args["requestId"]] if args.get("requestId") else list(pairing.pending)
        approved = [r["requestId"] for r in (pairing.approve(i) for i in ids) if r]
        if args.get("requestId") and not approved:
            raise ControlError("no pending request %s" % args["requestId"])
        return {"approved": approved}

    async def cmd_reject(self, args):
        request = self.gateway.pairing.reject(_required(args, "requestId"))
        if request is None:
            raise ControlError("no pending request %s" % args["requestId"])
        return {"rejected": request["requestId"], "deviceId": request["deviceId"]}

    async def cmd_expire(self, args):
        request = self.gateway.pairing.expire(_required(args, "requestId"))
        if request is None:
            raise ControlError("no pending request %s" % args["requestId"])
        return {"expired": request["requestId"]}

    async def cmd_pending(self, args):
        return {"pending": self.gateway.pairing.listing()}

    async def cmd_devices(self, args):
        devices = []
        for device in self.gateway.state.devices.values():
            roles = {role: {"scopes": r["scopes"], "issuedAtMs": r["issuedAtMs"]}
                     for role, r in device.get("roles", {}).items()}
            shown = {k: v for k, v in device.items() if k != "roles"}
            shown["roles"] = roles
            devices.append(shown)
        return {"devices": devices}

    async def cmd_forget(self, args):
        return {"forgotten": self.gateway.state.forget(_required(args, "deviceId"))}

    async def cmd_setup_code(self, args):
        return self.gateway.mint_setup_code(args.get("ttlMs"), args.get("profile"))

    # -- connections ---------------------------------------------------------------------------

    async def cmd_clients(self, args):
        # A node's caps and declared commands, as upstream's `node.list` shows them (server-methods/nodes.ts).
        clients = [{"connId": c.conn_id, "authenticated": c.authenticated, "role": c.role,
                    "scopes": c.scopes, "deviceId": c.device_id, "client": c.client,
                    "caps": c.caps, "commands": c.commands}
                   for c in self.gateway.connections.values()]
        return {"clients": clients}

    async def cmd_presence(self, args):
        """The instance list exactly as `system-presence` answers it."""
        return {"presence": self.gateway.presence.listing()}

    async def cmd_drop(self, args):
        return {"dropped": self.gateway.drop_all()}

    async def cmd_restart(self, args):
        down_ms = int(args.get("downMs", 1000))
        if not self.gateway.listening:
            raise ControlError("not listening (a restart is already under way)")
        await self.gateway.restart(down_ms)
        return {"downMs": down_ms, "port": self.gateway.port}

    async def cmd_shutdown(self, args):
        async def after():
            await self.gateway.shutdown(args.get("reason", "shutdown"))
        return {"violations": len(self.gateway.violations.entries), "_after": after}

    async def cmd_status(self, args):
        gw = self.gateway
        return {"url": gw.url, "port": gw.port, "listening": gw.listening,
                "connections": len(gw.connections),
                "authenticated": sum(1 for c in gw.connections.values() if c.authenticated),
                "violations": len(gw.violations.entries),
                "serverViolations": len(gw.violations.server_entries),
                "ticksStopped": gw.faults.ticks_stopped,
                "rejectSignature": gw.faults.reject_signature, "uptimeMs": gw.uptime_ms(),
                "fuzz": dict(gw.fuzz_progress)}

    # -- faults --------------------------------------------------------------------------------

    async def cmd_stop_ticks(self, args):
        self.gateway.faults.ticks_stopped = True
        return {}

    async def cmd_start_ticks(self, args):
        self.gateway.faults.ticks_stopped = False
        return {}

    async def cmd_reject_signature(self, args):
        mode = str(args.get("mode", "on"))
        if mode not in SIGNATURE_MODES:
            raise ControlError("reject-signature takes one of %s" % ", ".join(SIGNATURE_MODES))
        self.gateway.faults.reject_signature = mode
        return {"rejectSignature": mode}

    async def cmd_no_challenge(self, args):
        self.gateway.faults.no_challenge = str(args.get("mode", "on")) == "on"
        return {"noChallenge": self.gateway.faults.no_challenge}

    async def cmd_unavailable(self, args):
        faults = self.gateway.faults
        faults.unavailable_left = int(args.get("count", 1))
        faults.unavailable_retry_after_ms = int(args.get("retryAfterMs", 1000))
        return {"count": faults.unavailable_left, "retryAfterMs": faults.unavailable_retry_after_ms}

    async def cmd_fail_connect(self, args):
        spec = {"code": _required(args, "code"), "count": int(args.get("count", 1))}
        for key in ("details", "message", "retryAfterMs", "retryable"):
            if key in args:
                spec[key] = args[key]
        self.gateway.faults.forced_failures.append(spec)
        return {"queued": spec}

    async def cmd_rate_limit(self, args):
        return await self.cmd_fail_connect({"code": "AUTH_RATE_LIMITED",
                                            "count": args.get("count", 1),
                                            "retryAfterMs": args.get("retryAfterMs", 1000)})

    async def cmd_fuzz(self, args):
        gw = self.gateway
        if gw.fuzz_progress["running"]:
            raise ControlError("a fuzz run is still sending (see status)")
        generator = HostileFrames(int(args.get("seed", 0)), args.get("kinds") or KINDS)
        count = int(args.get("count", 100))
        # Sent in the background: a client that reads on the thread that sent this command
        # would otherwise deadlock against a full socket buffer. `wait: true` replies when done.
        task = gw.spawn(gw.send_hostile(generator, count, args.get("target", "authenticated"),
                                        gw.fuzz_progress))
        if args.get("wait"):
            await task
            return dict(gw.fuzz_progress)
        return {"started": True, "count": count, "connections": len(gw.targets(
            args.get("target", "authenticated")))}

    async def cmd_send_raw(self, args):
        if not any(k in args for k in ("text", "hex", "size", "wire")):
            raise ControlError("send-raw needs text, hex, size or wire")
        return {"sent": await self.gateway.send_raw(args)}

    # -- inspection ----------------------------------------------------------------------------

    async def cmd_violations(self, args):
        log = self.gateway.violations
        reply = {"count": len(log.entries), "violations": list(log.entries),
                 "serverViolations": list(log.server_entries)}
        if args.get("clear"):
            log.clear()
        return reply

    async def cmd_clear_violations(self, args):
        return {"cleared": self.gateway.violations.clear()}

    async def cmd_frames(self, args):
        frames = list(self.gateway.frames)
        if args.get("connId"):
            frames = [f for f in frames if f["connId"] == args["connId"]]
        if args.get("last"):
            frames = frames[-int(args["last"]):]
        return {"frames": frames}

    async def cmd_help(self, args):
        names = sorted(n[4:].replace("_", "-") for n in dir(self) if n.startswith("cmd_"))
        return {"commands": names}


def _required(args, key):
    if not args.get(key):
        raise ControlError("missing %s" % key)
    return args[key]
