"""Methods served after `hello-ok`, with their role and operator-scope gates.

`chat.send`, `chat.history`, `chat.abort` and `talk.config` are served by the scripted agent in
`chat_agent.py`.
"""

from .approvals import APPROVAL_EVENTS, APPROVAL_GATES, ApprovalMethods
from .chat_agent import CHAT_GATES, ChatAgent
from .codec import now_ms
from .errors import error_shape
from .node_invoke import NodeInvokeMethods
from .talk_relay_methods import RELAY_EVENTS, RELAY_GATES, TalkRelayMethods
from .talk_voice import TalkVoiceMethods

# method -> (required operator scope or None, roles allowed)
METHOD_GATES = {
    "health": (None, ("operator", "node")),
    "system-presence": ("operator.read", ("operator", "node")),
    "chat.send": ("operator.write", ("operator",)),
    "device.pair.list": ("operator.pairing", ("operator",)),
    "device.pair.approve": ("operator.pairing", ("operator",)),
    "device.pair.reject": ("operator.pairing", ("operator",)),
    "node.event": (None, ("node",)),
    "talk.speak": ("operator.talk", ("operator",)),
    "tts.speak": ("operator.write", ("operator",)),
    "talk.mode": ("operator.talk", ("operator",)),
    # A node caller is refused upstream ("unauthorized role: node"): nodes hear voicewake.changed instead
    # (openclaw/openclaw src/gateway/role-policy.ts, server-methods.ts; docs nodes/voicewake.md).
    "voicewake.get": ("operator.read", ("operator",)),
    "voicewake.set": ("operator.write", ("operator",)),
    "node.invoke": ("operator.write", ("operator",)),
    "node.invoke.result": (None, ("node",)),
}
METHOD_GATES.update(CHAT_GATES)
METHOD_GATES.update(RELAY_GATES)
METHOD_GATES.update(APPROVAL_GATES)
EVENTS = ["connect.challenge", "tick", "shutdown", "presence", "chat", "device.pair.requested",
          "device.pair.resolved",
          "talk.mode", "voicewake.changed",
          "node.invoke.request"] + RELAY_EVENTS + APPROVAL_EVENTS


# Methods upstream refuses by role with INVALID_REQUEST "unauthorized role: <role>" (role-policy.ts).
ROLE_REFUSED_AS_INVALID = {"voicewake.get"}


class MethodError(Exception):
    """A request answered with an error shape."""

    def __init__(self, shape):
        super().__init__(shape["message"])
        self.shape = shape


def scope_satisfied(granted, required):
    """admin satisfies everything; write satisfies read and talk; otherwise an exact match."""
    granted = set(granted)
    if required in granted or "operator.admin" in granted:
        return True
    return "operator.write" in granted and required in ("operator.read", "operator.talk")


def check_gate(method, role, scopes):
    """Raises MethodError when the connection's role or scopes do not allow `method`."""
    if method not in METHOD_GATES:
        raise MethodError(error_shape("INVALID_REQUEST", "unknown method: %s" % method))
    scope, roles = METHOD_GATES[method]
    if role not in roles and method in ROLE_REFUSED_AS_INVALID:
        raise MethodError(error_shape("INVALID_REQUEST", "unauthorized role: %s" % role))
    if role not in roles:
        raise MethodError(error_shape("FORBIDDEN", "method %s is not available to role %s"
                                      % (method, role)))
    if scope and role == "operator" and not scope_satisfied(scopes, scope):
        raise MethodError(error_shape("FORBIDDEN", "missing scope: %s" % scope,
                                      details={"code": "MISSING_SCOPE", "missingScope": scope,
                                               "requiredScopes": [scope]}))


class Methods(
        TalkVoiceMethods,
        TalkRelayMethods,
        NodeInvokeMethods,
        ApprovalMethods,
):
    """Handlers; each returns the response payload or raises MethodError."""

    def __init__(self, gateway):
        self.gateway = gateway
        self.chat = ChatAgent(gateway)

    async def call(self, conn, method, params):
        if method in self.gateway.hidden_methods():
            raise MethodError(error_shape("INVALID_REQUEST", "unknown method: %s" % method))
        check_gate(method, conn.role, conn.scopes)
        handler = self.chat.handler(method) \
            or getattr(self, "_" + method.replace(".", "_").replace("-", "_"))
        return await handler(conn, params if isinstance(params, dict) else {})

    async def _health(self, conn, params):
        return {"ok": True, "ts": now_ms(), "uptimeMs": self.gateway.uptime_ms()}

    async def _system_presence(self, conn, params):
        return self.gateway.presence.listing()

    async def _device_pair_list(self, conn, params):
        paired = [{"deviceId": d["deviceId"], "roles": sorted(d.get("roles", {})),
                   "displayName": d.get("displayName")}
                  for d in self.gateway.state.devices.values()]
        return {"pending": self.gateway.pairing.listing(), "paired": paired}

    async def _device_pair_approve(self, conn, params):
        return self._resolve(self.gateway.pairing.approve, params)

    async def _device_pair_reject(self, conn, params):
        return self._resolve(self.gateway.pairing.reject, params)

    def _resolve(self, action, params):
        request = action(str(params.get("requestId", "")))
        if request is None:
            raise MethodError(error_shape("APPROVAL_NOT_FOUND", "unknown pairing request"))
        return {"requestId": request["requestId"], "deviceId": request["deviceId"]}
