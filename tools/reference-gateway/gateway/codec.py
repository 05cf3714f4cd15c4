"""Small encoding helpers shared by the Gateway: base64url, JSON, clocks, secret redaction."""

import base64
import json
import re
import time

SECRET_KEYS = {"token", "password", "deviceToken", "bootstrapToken", "approvalRuntimeToken",
               "agentRuntimeIdentityToken", "setupCode", "secret", "privateKey"}


def b64url_encode(data):
    """Base64url without padding, as the protocol writes keys, signatures and setup codes."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def b64url_decode(text):
    """Decodes base64url without padding (as the protocol writes it); ValueError otherwise."""
    if not isinstance(text, str) or any(c not in _B64URL for c in text) or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_B64URL = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def now_ms():
    """Wall-clock milliseconds, the unit of every timestamp on the wire."""
    return int(time.time() * 1000)


def dumps(obj):
    """Compact JSON for frames."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def safe_dumps(obj):
    """JSON for logs; a deeply nested hostile frame becomes a note instead of an exception."""
    try:
        return json.dumps(obj, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return '"<frame not printable>"'


def redact(value):
    """A copy of `value` with every secret-bearing field replaced by a length marker."""
    try:
        return _redact(value)
    except RecursionError:
        return "<frame nested too deeply to show>"


def _redact(value):
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in SECRET_KEYS and isinstance(item, str):
                out[key] = "<redacted len=%d>" % len(item)
            else:
                out[key] = _redact(item)
        return out
    if isinstance(value, list):
        return [_redact(item) for item in value]
    return value


def preview(raw, limit=512):
    """A printable, length-limited view of a frame that could not be parsed (never the whole thing)."""
    if isinstance(raw, (bytes, bytearray)):
        text = bytes(raw[:limit]).decode("utf-8", errors="replace")
    else:
        text = raw[:limit]
    suffix = "...(%d bytes)" % len(raw) if len(raw) > limit else ""
    # Unparseable text may still hold a credential; mask anything that looks like one.
    return _SECRET_TEXT.sub(lambda m: m.group(1) + '"<redacted>"', text) + suffix


_SECRET_TEXT = re.compile(r'("(?:%s)"\s*:\s*)"[^"]*"?' % "|".join(sorted(SECRET_KEYS)))
