"""Validation of every frame against the Gateway's JSON Schema (draft-07), and the violation log.

Frames received from clients are checked as a whole (RequestFrame / ResponseFrame / EventFrame by
`type`) and, for known methods, their params against the method's `*Params` definition. Frames the
Gateway itself sends are checked too, so a bug here cannot hide a client bug.
"""

import json
import re
import sys

import jsonschema

from .codec import now_ms, redact, safe_dumps

FRAME_DEFINITIONS = {"req": "RequestFrame", "res": "ResponseFrame", "event": "EventFrame"}
EVENT_DEFINITIONS = {"tick": "TickEvent", "shutdown": "ShutdownEvent", "chat": "ChatEvent",
                     "device.pair.requested": "DevicePairRequestedEvent",
                     "device.pair.resolved": "DevicePairResolvedEvent",
                     "node.invoke.request": "NodeInvokeRequestEvent"}
# Event fields newer than the protocol-3 schema (fact sheet §4.3: `chat` deltas carry `deltaText`
# and `replace`); they are removed before an outgoing payload is checked.
ADDITIVE_EVENT_FIELDS = {"chat": ("deltaText", "replace")}
# hello-ok `policy` fields newer than the protocol-3 schema: `attachments {maxBytes, maxImageBytes}`
# (docs gateway/protocol.md; src/gateway/chat-attachment-policy.ts). Checked here by hand, then removed.
NEWER_HELLO_POLICY_FIELDS = ("attachments",)
MAX_ERRORS = 5
MAX_FRAME_CHARS = 4096


def params_definition_name(method):
    """`chat.send` -> `ChatSendParams`, `device.pair.approve` -> `DevicePairApproveParams`."""
    parts = [p for p in re.split(r"[.\-_]", method) if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) + "Params"


class SchemaChecker:
    """Validators for the frame and params definitions; `None` schema means checking is off."""

    def __init__(self, schema_path):
        self.path = schema_path
        with open(schema_path, encoding="utf-8") as handle:
            self.schema = json.load(handle)
        self.definitions = self.schema.get("definitions", {})
        self._validators = {}
        self._root = jsonschema.Draft7Validator(self.schema)

    def validator(self, name):
        """A cached validator for one definition, or None when the schema has no such name."""
        if name not in self.definitions:
            return None
        if name not in self._validators:
            wrapper = {"$ref": "#/definitions/" + name, "definitions": self.definitions}
            self._validators[name] = jsonschema.Draft7Validator(wrapper)
        return self._validators[name]

    def check_frame(self, frame):
        """Error strings for a whole frame (empty list when valid)."""
        name = FRAME_DEFINITIONS.get(frame.get("type")) if isinstance(frame, dict) else None
        validator = self.validator(name) if name else self._root
        errors = _messages(validator, frame, "")
        if not errors and name == "RequestFrame" and "params" in frame:
            errors = self.check_params(frame["method"], frame["params"])
        return errors

    def check_params(self, method, params):
        """Error strings for params of a method the schema defines (empty when valid or unknown)."""
        validator = self.validator(params_definition_name(method))
        return _messages(validator, params, "params") if validator else []

    def check_outgoing(self, frame):
        """Error strings for a frame the Gateway is about to send."""
        errors = self.check_frame(frame)
        if errors:
            return errors
        payload = frame.get("payload")
        if frame.get("type") == "res" and isinstance(payload, dict) \
                and payload.get("type") == "hello-ok":
            policy = payload.get("policy")
            errors = []
            if isinstance(policy, dict) and "attachments" in policy:
                limits = policy["attachments"]
                if not (isinstance(limits, dict) and set(limits) == {"maxBytes", "maxImageBytes"}
                        and all(isinstance(v, int) and v >= 1 for v in limits.values())):
                    errors.append("payload.policy.attachments: must be {maxBytes, maxImageBytes}, positive integers")
                payload = dict(payload, policy={k: v for k, v in policy.items()
                                                if k not in NEWER_HELLO_POLICY_FIELDS})
            return errors + _messages(self.validator("HelloOk"), payload, "payload")
        if frame.get("type") == "event":
            name = EVENT_DEFINITIONS.get(frame["event"])
            if name and self.validator(name):
                if isinstance(payload, dict) and frame["event"] in ADDITIVE_EVENT_FIELDS:
                    newer = ADDITIVE_EVENT_FIELDS[frame["event"]]
                    payload = {k: v for k, v in payload.items() if k not in newer}
                return _messages(self.validator(name), payload, "payload")
            if frame["event"] == "presence" and isinstance(payload, dict):
                entry = self.validator("PresenceEntry")
                return [e for item in payload.get("presence", [])
                        for e in _messages(entry, item, "payload.presence[]")]
        return []


def _messages(validator, instance, prefix):
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    out = []
    for error in errors[:MAX_ERRORS]:
        parts = ([prefix] if prefix else []) + [str(p) for p in error.absolute_path]
        path = ".".join(parts) or "<frame>"
        out.append("%s: %s" % (path, error.message[:300]))
    return out


class ViolationLog:
    """Every schema or framing violation seen, with the frame (secrets redacted) for the tests."""

    def __init__(self):
        self.entries = []
        self.server_entries = []

    def record(self, conn_id, kind, frame, errors):
        """Keeps and prints one client violation."""
        shown = redact(frame) if isinstance(frame, (dict, list)) else frame
        text = safe_dumps(shown) if not isinstance(shown, str) else shown
        if len(text) > MAX_FRAME_CHARS:
            text = text[:MAX_FRAME_CHARS] + "...(truncated)"
        entry = {"ts": now_ms(), "connId": conn_id, "kind": kind, "errors": list(errors),
                 "frame": text}
        self.entries.append(entry)
        print("refgw: VIOLATION %s on %s: %s | frame: %s" % (kind, conn_id, "; ".join(errors),
                                                            text[:600]),
              file=sys.stderr, flush=True)
        return entry

    def record_server(self, frame, errors):
        """Keeps and prints a frame this Gateway sent that breaks the schema (a refgw bug)."""
        entry = {"ts": now_ms(), "errors": list(errors),
                 "frame": safe_dumps(redact(frame))[:MAX_FRAME_CHARS]}
        self.server_entries.append(entry)
        print("refgw: BUG outgoing frame violates the schema: %s" % "; ".join(errors),
              file=sys.stderr, flush=True)

    def clear(self):
        count = len(self.entries)
        self.entries.clear()
        self.server_entries.clear()
        return count
