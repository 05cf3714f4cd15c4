"""Credential checks for `connect.params.auth`: shared token, password, bootstrap and device tokens.

Each failure raises `ConnectRejected` with the detail code of fact sheet §2.7. Passing here only
proves who the caller is; pairing (pairing.py) decides whether the device may have the role.
"""

import collections
import hmac
from dataclasses import dataclass

from . import bootstrap
from .codec import now_ms
from .errors import ConnectRejected, auth_failure


@dataclass
class AuthConfig:
    """The Gateway's shared secrets. Neither set means auth mode "none"."""

    token: str = None
    password: str = None

    @property
    def mode(self):
        if self.token is not None:
            return "token"
        if self.password is not None:
            return "password"
        return "none"


@dataclass
class AuthResult:
    """How a connect authenticated: method is token | password | none | device-token | bootstrap."""

    method: str
    bootstrap_token: str = None


def _same(a, b):
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def authenticate(params, device_id, config, state):
    """Resolves the caller's credentials; returns an `AuthResult` or raises `ConnectRejected`."""
    auth = params.get("auth") or {}
    role = params.get("role") or "operator"
    password = auth.get("password")
    if password is not None and config.password is not None:
        if not _same(password, config.password):
            raise auth_failure("AUTH_PASSWORD_MISMATCH", "unauthorized: gateway password mismatch",
                               recommendedNextStep="update_auth_credentials",
                               pauseReconnect=True)
        return AuthResult("password")
    token = auth.get("token")
    if token:
        if config.token is not None and _same(token, config.token):
            return AuthResult("token")
        _check_device_token(token, device_id, role, state, via_token_field=True,
                            shared_configured=config.token is not None)
        return AuthResult("device-token")
    if auth.get("deviceToken"):
        _check_device_token(auth["deviceToken"], device_id, role, state, via_token_field=False,
                            shared_configured=config.token is not None)
        return AuthResult("device-token")
    if auth.get("bootstrapToken"):
        _check_bootstrap(auth["bootstrapToken"], device_id, role, list(params.get("scopes") or []), state)
        return AuthResult("bootstrap", bootstrap_token=auth["bootstrapToken"])
    if password is not None:
        raise auth_failure("AUTH_PASSWORD_NOT_CONFIGURED",
                           "unauthorized: this gateway has no password configured",
                           recommendedNextStep="review_auth_configuration", pauseReconnect=True)
    if config.mode == "token":
        raise auth_failure("AUTH_TOKEN_MISSING", "unauthorized: gateway token missing",
                           recommendedNextStep="update_auth_configuration", pauseReconnect=True)
    if config.mode == "password":
        raise auth_failure("AUTH_PASSWORD_MISSING", "unauthorized: gateway password missing",
                           recommendedNextStep="update_auth_configuration", pauseReconnect=True)
    return AuthResult("none")


def _check_device_token(token, device_id, role, state, via_token_field, shared_configured):
    record = state.token_record(device_id, role) if device_id else None
    if record is not None and _same(token, record["token"]):
        return
    if via_token_field and shared_configured:
        can_retry = record is not None
        raise auth_failure("AUTH_TOKEN_MISMATCH", "unauthorized: gateway token mismatch",
                           canRetryWithDeviceToken=can_retry,
                           recommendedNextStep=("retry_with_device_token" if can_retry
                                                else "update_auth_credentials"),
                           pauseReconnect=not can_retry)
    raise auth_failure("AUTH_DEVICE_TOKEN_MISMATCH",
                       "unauthorized: device token mismatch (rotated or revoked); pair again",
                       recommendedNextStep="update_auth_credentials", pauseReconnect=True,
                       deviceId=device_id, role=role)


def _check_bootstrap(token, device_id, role, scopes, state):
    """`verifyDeviceBootstrapToken` (src/infra/device-bootstrap.ts): any role of the token's profile, with scopes
    inside it, bound to the first device that uses it; revoked after a handoff or once every role is redeemed."""
    record = state.bootstrap_record(token)
    reason = None
    if record is None:
        reason = "unknown"
    elif not bootstrap.allows(bootstrap.profile(record.get("profile")), role, scopes):
        reason = "role-not-in-profile"   # e.g. a node-only code on an operator connect (refgw's detail)
    elif record.get("revokedAtMs") is not None or record.get("usedAtMs") is not None:
        reason = "already-used"
    elif now_ms() > record["expiresAtMs"]:
        reason = "expired"
    elif record.get("deviceId") not in (None, device_id):
        reason = "bound-to-another-device"
    if reason is not None:
        raise auth_failure("AUTH_BOOTSTRAP_TOKEN_INVALID",
                           "unauthorized: bootstrap token invalid (%s); get a new setup code"
                           % reason,
                           reason=reason, recommendedNextStep="update_auth_credentials",
                           pauseReconnect=True)
    record["deviceId"] = device_id


class AuthRateLimiter:
    """Counts auth failures per key (device id, else remote address) in a sliding window."""

    def __init__(self, limit, window_ms=60_000):
        self.limit = limit
        self.window_ms = window_ms
        self.failures = collections.defaultdict(collections.deque)

    def check(self, key):
        """Raises AUTH_RATE_LIMITED while `key` has `limit` failures inside the window."""
        if self.limit <= 0:
            return
        times = self._trim(key)
        if len(times) >= self.limit:
            retry_after = max(1, times[0] + self.window_ms - now_ms())
            raise rate_limited(retry_after)

    def record_failure(self, key):
        if self.limit > 0:
            self._trim(key).append(now_ms())

    def _trim(self, key):
        times = self.failures[key]
        cutoff = now_ms() - self.window_ms
        while times and times[0] < cutoff:
            times.popleft()
        return times


def rate_limited(retry_after_ms):
    """The AUTH_RATE_LIMITED rejection."""
    return ConnectRejected("UNAVAILABLE", "too many failed authentication attempts",
                           details={"code": "AUTH_RATE_LIMITED",
                                    "recommendedNextStep": "wait_then_retry"},
                           retryable=True, retry_after_ms=retry_after_ms)
