"""Faults the tests switch on through the control channel."""

from dataclasses import dataclass, field

from .errors import ConnectRejected, CLOSE_TRY_AGAIN
from .auth import rate_limited

SIGNATURE_MODES = ("off", "on", "v3")


@dataclass
class Faults:
    """Switches read by the connection handlers and the tick loop."""

    ticks_stopped: bool = False
    no_challenge: bool = False            # skip connect.challenge (client challenge timeout)
    reject_signature: str = "off"         # on: every proof fails; v3: only v3 proofs fail
    unavailable_left: int = 0
    unavailable_retry_after_ms: int = 1000
    forced_failures: list = field(default_factory=list)   # [{"code", "count", ...}]

    def accepted_signature_versions(self, configured):
        """The signature versions to accept given the configured ones and the fault switch."""
        if self.reject_signature == "on":
            return ()
        if self.reject_signature == "v3":
            return tuple(v for v in configured if v != "v3")
        return tuple(configured)

    def next_connect_failure(self):
        """A forced rejection for this connect attempt, or None (consumes one count)."""
        if self.unavailable_left > 0:
            self.unavailable_left -= 1
            return ConnectRejected("UNAVAILABLE", "gateway is starting; retry shortly",
                                   details={"reason": "startup-sidecars"}, retryable=True,
                                   retry_after_ms=self.unavailable_retry_after_ms,
                                   close_code=CLOSE_TRY_AGAIN)
        while self.forced_failures:
            forced = self.forced_failures[0]
            if forced["count"] <= 0:
                self.forced_failures.pop(0)
                continue
            forced["count"] -= 1
            return forced_rejection(forced)
        return None


def forced_rejection(spec):
    """The rejection for a `fail-connect` spec: any §2.7 detail code with plausible details."""
    code = spec["code"]
    retry_after = spec.get("retryAfterMs")
    if code == "AUTH_RATE_LIMITED":
        return rate_limited(retry_after or 1000)
    details = {"code": code}
    details.update(spec.get("details") or {})
    top = "NOT_PAIRED" if code.startswith("PAIRING_") else "INVALID_REQUEST"
    message = spec.get("message") or "connect rejected (%s, injected)" % code
    return ConnectRejected(top, message, details=details, retryable=spec.get("retryable"),
                           retry_after_ms=retry_after)
