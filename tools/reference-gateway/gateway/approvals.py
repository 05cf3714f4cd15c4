"""Exec and plugin approvals, as upstream's Gateway serves them to an operator (fact sheet
`approvals-notify-share.md` §1).

Requests come from the control channel (`approval-request`: the agent asking before it runs a command),
each with its `allowedDecisions` (`src/infra/exec-approvals.ts`: `ask: always` allows once or deny; otherwise
allow-once, allow-always, deny, minus `unavailableDecisions`) and its expiry. Who hears of them follows
`src/gateway/server-broadcast.ts` (role operator with `operator.approvals` or `operator.admin`), the approval
client rule of the request context (`canDeliverApprovals`: cap `approvals`, `exec-approvals` or
`plugin-approvals`, or a first-party client id) and per-record visibility (`approval-record-lookup.ts`
`isApprovalRecordVisibleToClient`). Methods: `exec.approval.list|get|resolve`, `plugin.approval.list|resolve`,
and the unified `approval.get|resolve` (`packages/gateway-protocol/src/schema/approvals.ts`) only when unified
approvals are on (`--unified-approvals` or the `approvals-unified` control command). Errors as
`approval-shared.ts` gives them: `INVALID_REQUEST` with `details.reason` APPROVAL_NOT_FOUND,
APPROVAL_ALREADY_RESOLVED or APPROVAL_ALLOW_ALWAYS_UNAVAILABLE. An expired request is dropped without an event,
as the legacy manager's `expire()` does.
"""

import uuid

from .codec import now_ms
from .errors import error_shape

DECISIONS = ("allow-once", "allow-always", "deny")
DEFAULT_TIMEOUT_MS = 1_800_000   # DEFAULT_EXEC_APPROVAL_TIMEOUT_MS
PLUGIN_PREFIX = "plugin:"        # RESERVED_PLUGIN_APPROVAL_ID_PREFIX
APPROVAL_CAPS = {"approvals", "exec-approvals", "plugin-approvals"}
FIRST_PARTY_IDS = {"openclaw-control-ui", "openclaw-macos", "openclaw-ios", "openclaw-android", "openclaw-tui"}
UNIFIED_METHODS = ("approval.get", "approval.resolve")

APPROVAL_GATES = {m: ("operator.approvals", ("operator",)) for m in (
    "exec.approval.list", "exec.approval.get", "exec.approval.resolve",
    "plugin.approval.list", "plugin.approval.resolve") + UNIFIED_METHODS}
APPROVAL_EVENTS = ["exec.approval.requested", "exec.approval.resolved",
                   "plugin.approval.requested", "plugin.approval.resolved"]
NOT_FOUND = error_shape("INVALID_REQUEST", "unknown or expired approval id", details={
    "reason": "APPROVAL_NOT_FOUND",
    "remediation": "Re-request the action; pending approvals are cleared after expiry or restart."})


def allowed_decisions(ask, unavailable):
    """`src/infra/exec-approvals.ts`: deny always stays."""
    if ask == "always":
        return ["allow-once", "deny"]
    return [d for d in DECISIONS if d == "deny" or d not in (unavailable or [])]


def _method_error(shape):
    from .methods import MethodError   # methods imports this module
    return MethodError(shape)


class ApprovalStore:
    """Every approval asked for, pending or decided; lives on the Gateway's loop."""

    def __init__(self, unified=False):
        self.records = {}       # id -> record
        self.resolutions = []   # every decision recorded, in order: {id, kind, decision, resolvedBy, ts}
        self.unified = unified

    def hidden_methods(self):
        return set() if self.unified else set(UNIFIED_METHODS)

    def create(self, kind="exec", command="echo hello", ask="on-miss", unavailable=None, expires_in_ms=None,
               reviewer_device_ids=None, request_extra=None, approval_id=None, legacy_shape=False):
        created = now_ms()
        approval_id = approval_id or ((PLUGIN_PREFIX if kind == "plugin" else "") + str(uuid.uuid4()))
        decisions = allowed_decisions(ask, unavailable)
        if kind == "plugin":
            request = {"title": command[:80], "description": "A plugin tool wants to run.", "severity": "warning",
                       "pluginId": "refgw-plugin", "toolName": "refgw.tool", "toolCallId": "t-" + approval_id[-6:],
                       "allowedDecisions": decisions, "agentId": "main", "sessionKey": "agent:main:main",
                       "timeoutMs": int(expires_in_ms or 600_000)}
        else:
            request = {"command": command, "commandArgv": command.split(), "cwd": "/home/user/proj",
                       "host": "gateway", "nodeId": None, "security": "allowlist", "ask": ask, "warningText": None,
                       "allowedDecisions": decisions, "unavailableDecisions": list(unavailable or []),
                       "agentId": "main", "sessionKey": "agent:main:main", "runId": "r-" + approval_id[:8],
                       "toolCallId": "t-" + approval_id[:8], "resolvedPath": None, "systemRunBinding": None,
                       "systemRunPlan": None, "turnSourceChannel": None, "turnSourceTo": None,
                       "turnSourceAccountId": None, "turnSourceThreadId": None}
        request.update(request_extra or {})
        record = {"id": approval_id, "kind": kind, "request": request, "createdAtMs": created,
                  "expiresAtMs": created + int(expires_in_ms or DEFAULT_TIMEOUT_MS), "status": "pending",
                  "decision": None, "resolvedBy": None, "resolvedAtMs": None,
                  "reviewerDeviceIds": list(reviewer_device_ids) if reviewer_device_ids else None,
                  "legacyShape": bool(legacy_shape)}
        self.records[approval_id] = record
        return record

    def expire_due(self):
        now = now_ms()
        for record in self.records.values():
            if record["status"] == "pending" and now >= record["expiresAtMs"]:
                record["status"] = "expired"

    def pending(self, kind=None):
        self.expire_due()
        return [r for r in self.records.values() if r["status"] == "pending" and (kind is None or r["kind"] == kind)]

    def find(self, given, kind=None):
        """The record for an id or a unique prefix of one (`exec.approval.get|resolve` take prefixes)."""
        self.expire_due()
        if given in self.records and (kind is None or self.records[given]["kind"] == kind):
            return self.records[given]
        matches = [r for i, r in self.records.items() if i.startswith(given) and (kind is None or r["kind"] == kind)]
        if len(matches) > 1:
            raise _method_error(error_shape("INVALID_REQUEST", "ambiguous approval id prefix; use the full id"))
        return matches[0] if matches else None

    def decide(self, record, decision, resolved_by):
        """Applies a decision; raises the upstream error when it cannot. True when newly decided."""
        if decision not in DECISIONS:
            raise _method_error(error_shape("INVALID_REQUEST", "invalid decision"))
        if record["status"] == "expired":
            raise _method_error(NOT_FOUND)
        if record["status"] != "pending":
            if record["decision"] == decision:
                return False   # the same decision again: ok, nothing changes
            raise _method_error(error_shape("INVALID_REQUEST", "approval already resolved",
                                            details={"reason": "APPROVAL_ALREADY_RESOLVED"}))
        if decision not in record["request"]["allowedDecisions"]:
            raise _method_error(error_shape("INVALID_REQUEST", "allow-always is unavailable for this command",
                                            details={"reason": "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE"}))
        record.update(status="denied" if decision == "deny" else "allowed", decision=decision,
                      resolvedBy=resolved_by, resolvedAtMs=now_ms())
        self.resolutions.append({"id": record["id"], "kind": record["kind"], "decision": decision,
                                 "resolvedBy": resolved_by, "ts": record["resolvedAtMs"]})
        return True


# What older builds' requests lack (APR@8f8492d `src/gateway/server-methods/exec-approval.ts`: the payload is
# `{id, request, createdAtMs, expiresAtMs}` and the request a subset without the decisions).
LEGACY_ABSENT = ("allowedDecisions", "unavailableDecisions")


def requested_payload(record):
    """The requested event's payload and a list entry; a `legacyShape` record as older builds sent it."""
    if record.get("legacyShape"):
        request = {k: v for k, v in record["request"].items() if k not in LEGACY_ABSENT}
        return {"id": record["id"], "request": request, "createdAtMs": record["createdAtMs"],
                "expiresAtMs": record["expiresAtMs"]}
    return {"approvalKind": record["kind"], "id": record["id"], "request": record["request"],
            "createdAtMs": record["createdAtMs"], "expiresAtMs": record["expiresAtMs"]}


def resolved_payload(record):
    return {"id": record["id"], "decision": record["decision"], "resolvedBy": record["resolvedBy"],
            "ts": record["resolvedAtMs"], "request": record["request"]}


def snapshot(record):
    """The unified `TerminalApprovalSnapshot`-like view of `approval.get|resolve`."""
    status = record["status"]
    presentation = {"kind": record["kind"], "allowedDecisions": record["request"]["allowedDecisions"]}
    if record["kind"] == "exec":
        presentation["commandText"] = record["request"]["command"]
    else:
        presentation["title"] = record["request"]["title"]
    out = {"id": record["id"], "status": status, "decision": record["decision"],
           "createdAtMs": record["createdAtMs"], "expiresAtMs": record["expiresAtMs"],
           "presentation": presentation}
    if status != "pending":
        out["reason"] = "timeout" if status == "expired" else "user"
        out["resolvedAtMs"] = record["resolvedAtMs"]
    return out


def receives(conn, kind):
    """Gates a and b: an operator with approval scope that is an approval client for `kind`."""
    if not conn.authenticated or conn.role != "operator":
        return False
    if not ({"operator.approvals", "operator.admin"} & set(conn.scopes)):
        return False
    caps = set(getattr(conn, "caps", []) or [])
    client_id = (conn.client or {}).get("id")
    return bool(caps & {"approvals", kind + "-approvals"}) or client_id in FIRST_PARTY_IDS


def visible(conn, record):
    """Gate c: admin sees everything; otherwise a record targeted at this device, or a legacy unbound one."""
    if "operator.admin" in conn.scopes:
        return True
    reviewers = record.get("reviewerDeviceIds")
    return reviewers is None or (conn.device_id or "") in reviewers


class ApprovalMethods:
    """Method handlers (mixed into `Methods`, which supplies `self.gateway`)."""

    def _visible_record(self, conn, given, kind=None):
        record = self.gateway.approvals.find(str(given or ""), kind)
        if record is None or not visible(conn, record):
            raise _method_error(NOT_FOUND)
        return record

    async def _list_approvals(self, conn, kind):
        return [requested_payload(r) for r in self.gateway.approvals.pending(kind) if visible(conn, r)]

    async def _exec_approval_list(self, conn, params):
        return await self._list_approvals(conn, "exec")

    async def _plugin_approval_list(self, conn, params):
        return await self._list_approvals(conn, "plugin")

    async def _exec_approval_get(self, conn, params):
        record = self._visible_record(conn, params.get("id"), "exec")
        if record["status"] != "pending":
            raise _method_error(NOT_FOUND)
        request = record["request"]
        return {"id": record["id"], "commandText": request["command"], "commandPreview": request["command"][:120],
                "allowedDecisions": request["allowedDecisions"], "host": request["host"], "nodeId": request["nodeId"],
                "agentId": request["agentId"], "expiresAtMs": record["expiresAtMs"]}

    async def _resolve_approval(self, conn, params, kind):
        record = self._visible_record(conn, params.get("id"), kind)
        client = conn.client or {}
        by = client.get("displayName") or client.get("id")
        if self.gateway.approvals.decide(record, params.get("decision"), by):
            await broadcast_resolved(self.gateway, record)
        return record

    async def _exec_approval_resolve(self, conn, params):
        await self._resolve_approval(conn, params, "exec")
        return {"ok": True}

    async def _plugin_approval_resolve(self, conn, params):
        await self._resolve_approval(conn, params, "plugin")
        return {"ok": True}

    async def _approval_get(self, conn, params):
        return {"approval": snapshot(self._visible_record(conn, params.get("id")))}

    async def _approval_resolve(self, conn, params):
        # The protocol-3 schema predates the unified methods; their params are checked here as upstream's
        # closed schema has them ({id, kind, decision}).
        extra = set(params) - {"id", "kind", "decision"}
        if extra or params.get("kind") not in ("exec", "plugin") or not isinstance(params.get("id"), str):
            self.gateway.violations.record(conn.conn_id, "schema", params,
                                           ["params: approval.resolve takes {id, kind: exec|plugin, decision}"])
            raise _method_error(error_shape("INVALID_REQUEST", "invalid approval.resolve params"))
        before = self.gateway.approvals.records.get(params["id"], {}).get("status")
        record = await self._resolve_approval(conn, params, params["kind"])
        return {"applied": before == "pending", "approval": snapshot(record)}


async def broadcast_resolved(gateway, record):
    await gateway.broadcast(record["kind"] + ".approval.resolved", resolved_payload(record),
                            want=lambda c: receives(c, record["kind"]) and visible(c, record))


async def broadcast_requested(gateway, record):
    await gateway.broadcast(record["kind"] + ".approval.requested", requested_payload(record),
                            want=lambda c: receives(c, record["kind"]) and visible(c, record))


class ApprovalControl:
    """Control commands (mixed into `ControlServer`, which supplies `self.gateway`)."""

    async def cmd_approval_request(self, args):
        """`{"cmd": "approval-request", "command": "rm -rf build", "kind": "exec", "ask": "on-miss",
        "unavailableDecisions": ["allow-always"], "expiresInMs": 60000, "reviewerDeviceIds": [...], "id": "...",
        "legacyShape": true}`: the agent asks; every approval client that may see it gets `*.approval.requested`.
        With `legacyShape` the event and list entries carry neither `approvalKind` nor the request's decisions, as
        older builds sent them, while resolve still refuses what `ask` does not allow (a client that took all
        three as offered hears APPROVAL_ALLOW_ALWAYS_UNAVAILABLE)."""
        kind = args.get("kind", "exec")
        if kind not in ("exec", "plugin"):
            raise ValueError("approval-request kind is exec or plugin")
        record = self.gateway.approvals.create(
            kind=kind, command=str(args.get("command", "echo hello")), ask=args.get("ask", "on-miss"),
            unavailable=args.get("unavailableDecisions"), expires_in_ms=args.get("expiresInMs"),
            reviewer_device_ids=args.get("reviewerDeviceIds"), request_extra=args.get("request"),
            approval_id=args.get("id"), legacy_shape=bool(args.get("legacyShape")))
        await broadcast_requested(self.gateway, record)
        receivers = [c.conn_id for c in self.gateway.connections.values()
                     if receives(c, kind) and visible(c, record)]
        return {"approval": record, "deliveredTo": receivers}

    async def cmd_approval_resolve(self, args):
        """`{"cmd": "approval-resolve", "id": "...", "decision": "deny", "resolvedBy": "Phone"}`: another client
        decides (the resolved event goes to every approval client)."""
        from .control import ControlError
        store = self.gateway.approvals
        record = store.find(str(args.get("id", "")))
        if record is None:
            raise ControlError("no such approval")
        from .methods import MethodError
        try:
            if store.decide(record, args.get("decision", "deny"), args.get("resolvedBy", "another client")):
                await broadcast_resolved(self.gateway, record)
        except MethodError as failure:
            raise ControlError(failure.shape["message"])
        return {"approval": record}

    async def cmd_approvals(self, args):
        """Every approval and every decision recorded (`clear` forgets them)."""
        store = self.gateway.approvals
        store.expire_due()
        reply = {"approvals": list(store.records.values()), "resolutions": list(store.resolutions)}
        if args.get("clear"):
            store.records.clear()
            store.resolutions.clear()
        return reply

    async def cmd_approvals_unified(self, args):
        """`approvals-unified on|off`: serve (and list in hello-ok) the unified `approval.*` methods."""
        self.gateway.approvals.unified = str(args.get("mode", "on")) == "on"
        return {"unified": self.gateway.approvals.unified}


def approval_clients(gateway):
    """Connection ids that would hear exec approvals (for tests)."""
    return [c.conn_id for c in gateway.connections.values() if receives(c, "exec")]

