"""Error shapes the Gateway answers with, and the connect failure that carries one."""

# WebSocket close codes used when a connect attempt fails.
CLOSE_POLICY = 1008
CLOSE_PROTOCOL = 1002
CLOSE_TRY_AGAIN = 1013
CLOSE_RESTART = 1012
CLOSE_GOING_AWAY = 1001


def error_shape(code, message, details=None, retryable=None, retry_after_ms=None):
    """Builds an `ErrorShape` dict, leaving out the optional fields that are unset."""
    shape = {"code": code, "message": message}
    if details is not None:
        shape["details"] = details
    if retryable is not None:
        shape["retryable"] = retryable
    if retry_after_ms is not None:
        shape["retryAfterMs"] = int(retry_after_ms)
    return shape


class ConnectRejected(Exception):
    """A `connect` request that must be answered with an error and a closed socket.

    `close_reason` is the WebSocket close reason (at most 123 bytes on the wire).
    """

    def __init__(self, code, message, details=None, retryable=None, retry_after_ms=None,
                 close_code=CLOSE_POLICY, close_reason=None, counts_as_auth_failure=False):
        super().__init__(message)
        self.shape = error_shape(code, message, details, retryable, retry_after_ms)
        self.close_code = close_code
        self.close_reason = close_reason if close_reason is not None else message
        self.counts_as_auth_failure = counts_as_auth_failure

    @property
    def detail_code(self):
        details = self.shape.get("details")
        return details.get("code") if isinstance(details, dict) else None


def auth_failure(detail_code, message, **extra):
    """A connect rejection for bad credentials: `INVALID_REQUEST` with `details.code`."""
    details = {"code": detail_code}
    details.update(extra)
    return ConnectRejected("INVALID_REQUEST", message, details=details, counts_as_auth_failure=True)


def device_auth_failure(detail_code, message, reason):
    """A connect rejection for a bad device proof (`DEVICE_AUTH_*`)."""
    return ConnectRejected("INVALID_REQUEST", message,
                           details={"code": detail_code, "reason": reason},
                           counts_as_auth_failure=True)


def close_reason_bytes_safe(text, limit=123):
    """Trims `text` so its UTF-8 form fits a WebSocket close reason."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")
