"""Pending device-pairing requests: creation, approval, rejection, expiry and auto-approval.

A device that authenticates but is not paired for the role and scopes it asks for gets a pending
request (one per device, its roles merged); it stays pending until approved (control command,
`device.pair.approve`, `--auto-approve`, or the test knobs `--auto-approve-after-attempts` /
`--auto-approve-after-ms`) or rejected, unless the connect is approved silently (handshake.py decides).
"""

import uuid
from dataclasses import dataclass

from .codec import now_ms


@dataclass
class PairingPolicy:
    """When pending requests are approved without an operator."""

    auto_approve: bool = False
    after_attempts: int = 0       # approve on the Nth connect attempt (0 = never)
    after_ms: int = 0             # approve once the request is this old (0 = never)
    ttl_ms: int = 5 * 60 * 1000   # a request older than this expires


class PairingRequests:
    """Owns the pending requests and the one-shot verdicts (rejected/expired) devices must hear."""

    def __init__(self, state, policy, on_event=None):
        self.state = state
        self.policy = policy
        self.pending = {}          # requestId -> request record
        self.forced_request_id = None   # control `pairing-request-id`: hostile ids for client tests
        self.verdicts = {}         # (deviceId, role) -> ("rejected" | "expired", requestId)
        self.on_event = on_event or (lambda name, payload: None)

    def for_device(self, device_id):
        """The pending request of a device, or None."""
        return next((r for r in self.pending.values() if r["deviceId"] == device_id), None)

    def take_verdict(self, device_id, role):
        """A rejection or expiry of a request for `role` the device has not been told about yet (told once)."""
        return self.verdicts.pop((device_id, role), None)

    def expire_stale(self, device_id):
        """Drops the device's request if it outlived the TTL; returns its requestId or None."""
        existing = self.for_device(device_id)
        if existing and now_ms() - existing["createdAtMs"] > self.policy.ttl_ms:
            del self.pending[existing["requestId"]]
            return existing["requestId"]
        return None

    def request(self, device_id, metadata, role, scopes, reason, is_bootstrap, silent=False):
        """Creates, refreshes or supersedes the device's pending request; returns (request, approved).

        One pending request per device, as upstream (src/infra/device-pairing.ts `requestDevicePairing`, with
        pairing-files.ts `reconcilePendingPairingRequests`): a connect the pending request already covers (its
        roles hold `role`, its scopes allow `scopes`) refreshes it under the same requestId; any other replaces it
        with a new requestId whose roles and scopes are the union (the old one is announced resolved as rejected).
        A `silent` request (setup-code handoff, silent local approval) is approved at once.
        """
        from .bootstrap import scopes_allow
        existing = self.for_device(device_id)
        now = now_ms()
        if existing and role in existing["roles"] and scopes_allow(scopes, existing["scopes"]):
            existing["role"] = role
        else:
            roles, merged = [role], list(scopes)
            if existing:
                del self.pending[existing["requestId"]]
                roles = sorted(set(existing["roles"]) | {role})
                merged = sorted(set(existing["scopes"]) | set(scopes))
                self.on_event("device.pair.resolved", self._resolved_payload(existing, "rejected"))
            existing = {"requestId": self.forced_request_id or str(uuid.uuid4()), "deviceId": device_id,
                        "role": role, "roles": roles, "scopes": merged, "reason": reason,
                        "isBootstrap": is_bootstrap, "createdAtMs": now, "attempts": 0,
                        "supersedes": existing["requestId"] if existing else None}
            existing.update({k: v for k, v in metadata.items() if v is not None})
            self.pending[existing["requestId"]] = existing
            if not silent:
                self.on_event("device.pair.requested", self._requested_payload(existing))
        existing["attempts"] += 1
        if silent or self._auto_approves(existing, now):
            self.approve(existing["requestId"])
            return existing, True
        return existing, False

    def approve(self, request_id):
        """Pairs the device for every role of the request (node without scopes, operator with the request's)."""
        request = self.pending.pop(request_id, None)
        if request is None:
            return None
        metadata = {k: request.get(k) for k in ("publicKey", "displayName", "platform",
                                                 "deviceFamily", "clientId", "clientMode")}
        for role in request.get("roles") or [request["role"]]:
            scopes = [] if role == "node" else [s for s in request["scopes"] if s.startswith("operator.")]
            self.state.pair(request["deviceId"], metadata, role, scopes)
        self.on_event("device.pair.resolved", self._resolved_payload(request, "approved"))
        return request

    def reject(self, request_id):
        """Drops the request; the device hears PAIRING_REJECTED on its next connect."""
        request = self.pending.pop(request_id, None)
        if request is None:
            return None
        for role in request.get("roles") or [request["role"]]:
            self.verdicts[(request["deviceId"], role)] = ("rejected", request_id)
        self.on_event("device.pair.resolved", self._resolved_payload(request, "rejected"))
        return request

    def expire(self, request_id):
        """Test knob: expires the request now; the device hears PAIRING_EXPIRED next time."""
        request = self.pending.pop(request_id, None)
        if request is not None:
            for role in request.get("roles") or [request["role"]]:
                self.verdicts[(request["deviceId"], role)] = ("expired", request_id)
        return request

    def listing(self):
        """The pending requests as the control channel shows them (no secrets in them)."""
        return [dict(r) for r in self.pending.values()]

    def _auto_approves(self, request, now):
        policy = self.policy
        return (policy.auto_approve
                or (policy.after_attempts > 0 and request["attempts"] >= policy.after_attempts)
                or (policy.after_ms > 0 and now - request["createdAtMs"] >= policy.after_ms))

    @staticmethod
    def _requested_payload(request):
        payload = {"requestId": request["requestId"], "deviceId": request["deviceId"],
                   "publicKey": request.get("publicKey") or "unknown", "role": request["role"],
                   "roles": list(request.get("roles") or [request["role"]]),
                   "scopes": [s for s in request["scopes"] if s], "ts": request["createdAtMs"]}
        for key in ("displayName", "platform", "deviceFamily", "clientId", "clientMode"):
            if request.get(key):
                payload[key] = request[key]
        return payload

    @staticmethod
    def _resolved_payload(request, decision):
        return {"requestId": request["requestId"], "deviceId": request["deviceId"],
                "decision": decision, "ts": now_ms()}
