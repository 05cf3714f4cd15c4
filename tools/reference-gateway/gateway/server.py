"""The Gateway: the listening socket, the live connections, broadcasts, ticks and restarts."""

import asyncio
import collections
import logging
import sys
import time

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

from .approvals import ApprovalStore
from .auth import AuthConfig, AuthRateLimiter
from .codec import now_ms, preview, redact, safe_dumps
from .connection import Connection
from .errors import CLOSE_GOING_AWAY, CLOSE_RESTART
from .faults import Faults
from .hostile_setup import HostileSetup
from .methods import EVENTS, METHOD_GATES, Methods
from .node_invoke import NodeInvokes
from .pairing import PairingPolicy, PairingRequests
from .presence import Presence
from .schema_check import ViolationLog
from .setup_code import encode_setup_code
from .state import GatewayState
from .talk_audio import ClipIndex
from .talk_relay import RelayState
from .talk_relay_control import parse_contract
from .talk_relay_methods import RELAY_EVENTS, era_events, hidden_relay_methods
from .talk_voice import TalkVoiceState
from . import tls

FRAME_LOG_SIZE = 2000
FRAME_LOG_FULL_BYTES = 16 * 1024


class Gateway:
    """Everything the Gateway owns; all of it lives on one asyncio loop."""

    def __init__(self, options, checker):
        self.options = options
        self.checker = checker
        self.state = GatewayState(options.state_dir)
        self.pairing = PairingRequests(self.state, PairingPolicy(
            auto_approve=options.auto_approve, after_attempts=options.auto_approve_after_attempts,
            after_ms=options.auto_approve_after_ms, ttl_ms=options.pairing_ttl_ms),
            on_event=self._pairing_event)
        self.hostile_setup = HostileSetup()
        self.faults = Faults(unavailable_left=options.startup_unavailable,
                             unavailable_retry_after_ms=options.startup_retry_after_ms)
        self.limiter = AuthRateLimiter(options.auth_failure_limit)
        self.auth_config = AuthConfig(options.token, options.password)
        self.violations = ViolationLog()
        self.frames = collections.deque(maxlen=FRAME_LOG_SIZE)
        self.presence = Presence()
        self.talk_voice = TalkVoiceState()
        self.talk_relay = RelayState(ClipIndex(options.relay_corpus) if options.relay_corpus else None)
        self.talk_relay.settings.update(era=options.talk_era, **{
            key: parse_contract(value) for key, value in (
                ("transcriptionContract", options.transcription_uplink),
                ("realtimeContract", options.realtime_uplink)) if value})
        self.node_invokes = NodeInvokes()
        self.approvals = ApprovalStore(unified=getattr(options, "unified_approvals", False))
        self.methods = Methods(self)
        self.connections = {}
        self.started = time.monotonic()
        self.server = None
        self.port = options.port
        self.listening = False
        self.ssl_context = None
        self.fingerprint = None
        self.stopped = asyncio.Event()
        self.fuzz_progress = {"running": False, "sent": 0}
        self._tasks = set()
        logging.getLogger("websockets").setLevel(logging.CRITICAL)
        if options.tls:
            self._setup_tls()

    # -- listening -----------------------------------------------------------------------------

    @property
    def url(self):
        scheme = "wss" if self.ssl_context else "ws"
        host = "[%s]" % self.options.host if ":" in self.options.host else self.options.host
        return "%s://%s:%d" % (scheme, host, self.port)

    async def listen(self, attempts=1):
        """Starts listening (on the same port as before after a restart)."""
        for attempt in range(attempts):
            try:
                self.server = await serve(
                    self._handler, self.options.host, self.port, ssl=self.ssl_context,
                    max_size=self.options.preauth_max_payload, ping_interval=None,
                    compression=None, open_timeout=10, close_timeout=2,
                    process_request=lambda _conn, _request: self.hostile_setup.refusal())
                break
            except OSError:
                if attempt == attempts - 1:
                    raise
                await asyncio.sleep(0.1)
        self.port = self.server.sockets[0].getsockname()[1]
        self.listening = True
        self.spawn(self._tick_loop())

    async def stop_listening(self, code, reason):
        """Closes every connection with `code` and stops accepting new ones."""
        self.listening = False
        if self.server is None:
            return
        self.server.close(close_connections=False)
        await asyncio.gather(*(c.close(code, reason) for c in list(self.connections.values())),
                             return_exceptions=True)
        await self.server.wait_closed()
        self.server = None

    async def restart(self, down_ms):
        """Announces a restart, closes everything, and listens again on the same port later."""
        await self.broadcast("shutdown", {"reason": "restart", "restartExpectedMs": int(down_ms)})
        await self.stop_listening(CLOSE_RESTART, "gateway restarting")
        self.log("restarting: down for %d ms" % down_ms)

        async def come_back():
            await asyncio.sleep(down_ms / 1000)
            try:
                await self.listen(attempts=50)
            except OSError as failure:
                print("refgw: cannot listen again on port %d: %s" % (self.port, failure),
                      file=sys.stderr, flush=True)
                return
            self.log("listening again on %s" % self.url)
        self.spawn(come_back())

    async def shutdown(self, reason="shutdown"):
        """Announces the shutdown, closes everything and lets `main` exit."""
        await self.broadcast("shutdown", {"reason": reason})
        await self.stop_listening(CLOSE_GOING_AWAY, "gateway shutting down")
        self.stopped.set()

    def drop_all(self):
        """Drops every connection abruptly (no close frame), like a network failure."""
        count = 0
        for conn in list(self.connections.values()):
            conn.ws.transport.abort()
            count += 1
        return count

    # -- connections ---------------------------------------------------------------------------

    async def _handler(self, ws):
        conn = Connection(self, ws)
        self.connections[conn.conn_id] = conn
        try:
            await conn.run()
        finally:
            del self.connections[conn.conn_id]
            self.methods.drop_relay_sessions(conn)
            if conn.authenticated and self.presence.leave(conn.conn_id):
                await self.broadcast_presence()

    async def broadcast_presence(self):
        """Announces the presence list to every authenticated connection."""
        await self.broadcast("presence", {"presence": self.presence.listing()},
                             state_version=self.state_version())

    async def broadcast(self, event, payload, want=None, state_version=None):
        """Sends an event to every authenticated connection `want` accepts."""
        targets = [c for c in list(self.connections.values())
                   if c.authenticated and (want is None or want(c))]
        await asyncio.gather(*(c.send_event(event, payload, state_version) for c in targets),
                             return_exceptions=True)

    async def _tick_loop(self):
        server = self.server
        while self.server is server and self.listening:
            await asyncio.sleep(self.options.tick_interval_ms / 1000)
            if self.server is server and not self.faults.ticks_stopped:
                await self.broadcast("tick", {"ts": now_ms()})

    def _pairing_event(self, name, payload):
        def wants(conn):
            return conn.role == "operator" and (
                {"operator.pairing", "operator.admin"} & set(conn.scopes))
        self.spawn(self.broadcast(name, payload, want=wants))

    # -- views ---------------------------------------------------------------------------------

    def uptime_ms(self):
        return int((time.monotonic() - self.started) * 1000)

    def state_version(self):
        return {"presence": self.presence.version, "health": 1}

    def snapshot(self):
        """The hello-ok snapshot (presence includes connections that are already in)."""
        snapshot = {"presence": self.presence.listing(), "health": {"ok": True},
                "stateVersion": self.state_version(), "uptimeMs": self.uptime_ms(),
                "sessionDefaults": {"defaultAgentId": "main", "mainKey": "main",
                                    "mainSessionKey": "agent:main:main"},
                "authMode": self.auth_config.mode}
        if not self.methods.chat.session_defaults:   # control `session-defaults off`
            del snapshot["sessionDefaults"]
        return snapshot

    def method_names(self):
        return sorted(set(METHOD_GATES) - self.hidden_methods())

    def hidden_methods(self):
        """Methods answered as unknown: hidden on command, or of another Talk naming era."""
        return (self.talk_voice.hidden_methods | hidden_relay_methods(self.talk_relay.settings["era"])
                | self.approvals.hidden_methods())

    def event_names(self):
        era = era_events(self.talk_relay.settings["era"])
        return [e for e in EVENTS if e not in RELAY_EVENTS or e in era]

    def check_frame(self, frame):
        """Schema errors for a received frame; a minimal shape check when there is no schema."""
        if self.checker is not None:
            try:
                return self.checker.check_frame(frame)
            except RecursionError:
                return ["<frame>: nested too deeply to validate"]
        if frame.get("type") == "req" and not (isinstance(frame.get("id"), str) and frame["id"]
                                               and isinstance(frame.get("method"), str)):
            return ["<frame>: a request needs a non-empty string id and a method"]
        return []

    # -- setup codes, raw sends ----------------------------------------------------------------

    def mint_setup_code(self, ttl_ms=None, profile=None):
        """A new bootstrap token and the setup code that carries it."""
        token, expires = self.state.mint_bootstrap(
            ttl_ms if ttl_ms is not None else self.options.bootstrap_ttl_ms,
            profile or self.options.bootstrap_profile)
        url = self.options.public_url or self.url
        code = encode_setup_code(url, token, self.fingerprint)
        return {"setupCode": code, "bootstrapToken": token, "expiresAtMs": expires, "url": url}

    def targets(self, target):
        """Live connections matching all | authenticated | preauth | a connId."""
        return [c for c in list(self.connections.values())
                if target == "all" or (target == "authenticated" and c.authenticated)
                or (target == "preauth" and not c.authenticated) or target == c.conn_id]

    async def send_hostile(self, generator, count, target, progress):
        """Sends `count` generated hostile messages to each target, counting into `progress`."""
        conns = self.targets(target)
        progress.update({"running": True, "sent": 0, "count": count, "connections": len(conns),
                         "byKind": {}})
        by_kind = collections.Counter()
        for _ in range(count):
            kind, message = generator.next()
            by_kind[kind] += 1
            for conn in conns:
                try:
                    await conn.ws.send(message, text=kind != "binary-garbage")
                except ConnectionClosed:
                    pass
            progress["sent"] += 1
        progress.update({"running": False, "byKind": dict(by_kind)})
        self.log("fuzz: sent %d hostile messages to %d connection(s)" % (count, len(conns)))

    async def send_raw(self, spec):
        """Sends a hostile message to clients; see README (`send-raw`). Returns the count sent."""
        conns = self.targets(spec.get("target", "all"))
        if "wire" in spec:
            data = bytes.fromhex(spec["wire"])
            for conn in conns:
                conn.ws.transport.write(data)
            return len(conns)
        if "size" in spec:
            head = '{"type":"event","event":"refgw.filler","payload":{"pad":"'
            pad = max(0, int(spec["size"]) - len(head) - 3)
            message = head + "x" * pad + '"}}'
            if spec.get("shape") == "values":   # as many JSON values as fit: the costliest to parse
                head = '{"type":"event","event":"refgw.filler","payload":{"pad":['
                count = max(1, (int(spec["size"]) - len(head) - 3) // 2)
                message = head + ",".join("0" * count) + "]}}"
        elif "hex" in spec:
            message = bytes.fromhex(spec["hex"])
        else:
            message = spec.get("text", "")
        as_text = spec.get("binary") is not True and (isinstance(message, str)
                                                       or bool(spec.get("asText")))
        if isinstance(message, str) and not as_text:
            message = message.encode("utf-8")
        sent = 0
        for conn in conns:
            try:
                await conn.ws.send(message, text=as_text)
                sent += 1
            except ConnectionClosed:
                # The client hung up on it, which is what some hostile messages are for: the control
                # request that asked for it is still answered (CI once lost that answer, twice in a row).
                pass
        return sent

    # -- logging -------------------------------------------------------------------------------

    def log(self, text):
        if not self.options.quiet:
            print("refgw: " + text, file=sys.stderr, flush=True)

    def log_frame(self, conn_id, raw, frame):
        kind = "binary" if isinstance(raw, (bytes, bytearray)) else "text"
        if frame is not None and len(raw) <= FRAME_LOG_FULL_BYTES:
            shown = redact(frame)
        else:  # large frames (or unparseable ones) are kept as a short redacted preview
            shown = preview(safe_dumps(redact(frame))) if frame is not None else preview(raw)
        entry = {"ts": now_ms(), "connId": conn_id, "kind": kind, "size": len(raw), "frame": shown}
        self.frames.append(entry)
        if self.options.log_frames:
            print("refgw: <- " + safe_dumps(entry)[:2000], file=sys.stderr, flush=True)

    def spawn(self, coro):
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _setup_tls(self):
        options = self.options
        if options.tls_cert:
            cert, key = options.tls_cert, options.tls_key or options.tls_cert
        else:
            cert, key = tls.ensure_self_signed(options.state_dir or options.scratch_dir)
        self.ssl_context = tls.server_context(cert, key)
        self.fingerprint = tls.leaf_fingerprint(cert)
