"""Node commands and node events: `node.invoke` (operator -> Gateway -> node and back),
`node.invoke.result`, and `node.event` (with `node.presence.alive` beacons).

An operator's `node.invoke` becomes a `node.invoke.request` event on the node's socket
(`paramsJSON` carries the params); the node's `node.invoke.result` request completes it. The Gateway
only forwards commands the node declared in `connect`, as the real one does; the control channel
can force others through, or send hostile requests with `send-raw`.
"""

import asyncio
import json
import uuid

from . import node_command_policy
from .codec import now_ms
from .errors import error_shape
from .talk_voice import recorded

DEFAULT_TIMEOUT_MS = 30000
PRESENCE_ALIVE = "node.presence.alive"


class NodeInvokes:
    """Invocations waiting for their node's result, and what nodes sent back."""

    def __init__(self):
        self.waiting = {}     # invoke id -> future of the node.invoke.result params
        self.results = []     # every node.invoke.result received (also unknown or late ones)
        self.beacons = []     # node.presence.alive payloads, with the node's device id


def find_node(gw, node_id):
    """The live node connection for `node_id` (a device id, instance id or connection id)."""
    wanted = str(node_id or "").lower()
    for conn in gw.connections.values():
        if not conn.authenticated or conn.role != "node":
            continue
        ids = {(conn.device_id or "").lower(), conn.conn_id.lower(),
               str(conn.client.get("instanceId") or "").lower()}
        if wanted in ids:
            return conn
    return None


async def invoke(gw, node, command, params, timeout_ms=DEFAULT_TIMEOUT_MS, request=None):
    """Sends `node.invoke.request` to `node` and waits for its result (params of the node's
    `node.invoke.result`); a timeout gives the `UNAVAILABLE` result iOS reports."""
    invoke_id = str(uuid.uuid4())
    node_id = node.device_id or node.conn_id
    payload = request if request is not None else {
        "id": invoke_id, "nodeId": node_id, "command": command,
        "timeoutMs": int(timeout_ms), "idempotencyKey": str(uuid.uuid4())}
    if request is None and params is not None:
        payload["paramsJSON"] = json.dumps(params)
    if isinstance(request, dict) and isinstance(request.get("id"), str):
        invoke_id = request["id"]
    future = asyncio.get_running_loop().create_future()
    gw.node_invokes.waiting[invoke_id] = future
    try:
        await node.send_event("node.invoke.request", payload)
        return await asyncio.wait_for(future, timeout_ms / 1000)
    except asyncio.TimeoutError:
        return {"id": invoke_id, "nodeId": node_id, "ok": False,
                "error": {"code": "UNAVAILABLE", "message": "node invoke timed out"}}
    finally:
        gw.node_invokes.waiting.pop(invoke_id, None)


class NodeInvokeMethods:
    """Method handlers (mixed into `Methods`, which supplies `self.gateway`)."""

    async def _node_invoke(self, conn, params):
        from .methods import MethodError
        gw = self.gateway
        node = find_node(gw, params.get("nodeId"))
        if node is None:
            raise MethodError(error_shape("UNAVAILABLE", "node not connected"))
        command = params.get("command")
        if not node_command_policy.allowed(node, command):
            raise MethodError(error_shape("INVALID_REQUEST", "node command not allowed: %s"
                                          % command, details={"command": command}))
        timeout_ms = params.get("timeoutMs") or DEFAULT_TIMEOUT_MS
        result = await invoke(gw, node, command, params.get("params"), timeout_ms)
        if not result.get("ok"):
            error = result.get("error") if isinstance(result.get("error"), dict) else {}
            raise MethodError(error_shape(
                str(error.get("code") or "UNAVAILABLE"), str(error.get("message") or "node error"),
                details={"nodeError": error}))
        payload = result.get("payload")
        if payload is None and isinstance(result.get("payloadJSON"), str):
            try:
                payload = json.loads(result["payloadJSON"])
            except ValueError:
                payload = None
        return {"ok": True, "nodeId": result.get("nodeId"), "command": command,
                "payload": payload, "payloadJSON": result.get("payloadJSON")}

    async def _node_invoke_result(self, conn, params):
        invokes = self.gateway.node_invokes
        entry = dict(params)
        entry["fromNode"] = conn.device_id or conn.conn_id
        entry["ts"] = now_ms()
        invokes.results.append(entry)
        future = invokes.waiting.get(params.get("id"))
        if future is not None and not future.done():
            future.set_result(dict(params))
            return {"ok": True}
        return {"ok": True, "ignored": True}   # late or unknown: the Gateway just drops it

    async def _node_event(self, conn, params):
        gw = self.gateway
        event = params.get("event")
        payload = params.get("payload")
        if payload is None and isinstance(params.get("payloadJSON"), str):
            try:
                payload = json.loads(params["payloadJSON"])
            except ValueError:
                gw.violations.record(conn.conn_id, "schema", params,
                                     ["params.payloadJSON: not JSON"])
                return {"ok": False, "event": event, "handled": False, "reason": "bad-payload"}
        if event != PRESENCE_ALIVE:
            return {"ok": True, "event": event, "handled": False, "reason": "unknown-event"}
        if gw.checker is not None:
            validator = gw.checker.validator("NodePresenceAlivePayload")
            errors = [e.message for e in validator.iter_errors(payload)] if validator else []
            if errors:
                gw.violations.record(conn.conn_id, "schema", params,
                                     ["params.payload: " + e for e in errors[:5]])
                return {"ok": False, "event": event, "handled": False, "reason": "bad-payload"}
        gw.node_invokes.beacons.append({"deviceId": conn.device_id, "payload": payload,
                                        "ts": now_ms()})
        if gw.presence.seen(conn.conn_id, (payload or {}).get("trigger")):
            await gw.broadcast_presence()
        return {"ok": True, "event": event, "handled": True}


class NodeInvokeControl:
    """Control commands (mixed into `ControlServer`, which supplies `self.gateway`)."""

    async def cmd_node_invoke(self, args):
        """`{"cmd": "node-invoke", "command": "talk.ptt.start", "params": {...}}`: as an operator's
        node.invoke would; `nodeId` (default: the only node), `force` skips the declared-commands
        check, `request` sends that raw event payload instead. Replies with the node's result."""
        from .control import ControlError
        gw = self.gateway
        nodes = [c for c in gw.connections.values() if c.authenticated and c.role == "node"]
        node = find_node(gw, args["nodeId"]) if args.get("nodeId") else (
            nodes[0] if len(nodes) == 1 else None)
        if node is None:
            raise ControlError("no such node (connected nodes: %d)" % len(nodes))
        command = args.get("command")
        if not node_command_policy.allowed(node, command) and not args.get("force") and "request" not in args:
            raise ControlError("the node did not declare %s, or its platform may not run it (use force)" % command)
        result = await invoke(gw, node, command, args.get("params"),
                              int(args.get("timeoutMs") or DEFAULT_TIMEOUT_MS), args.get("request"))
        return {"result": result}

    async def cmd_node_results(self, args):
        return recorded("results", self.gateway.node_invokes.results, args)

    async def cmd_presence_beacons(self, args):
        return recorded("beacons", self.gateway.node_invokes.beacons, args)
