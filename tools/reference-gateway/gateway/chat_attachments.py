"""`chat.send` attachments checked as a current Gateway checks them, before the run starts.

`hello-ok.policy.attachments {maxBytes, maxImageBytes}` states the decoded size each attachment may have
(`src/gateway/chat-attachment-policy.ts`: `agents.defaults.mediaMaxMb`, 20 MiB by default, and images at most
min(maxBytes, 6 MB) as MAX_IMAGE_BYTES). An attachment is `{type, mimeType, fileName, content}` with base64
content, or `{source: {type: "base64", media_type, data}}`; one without content is dropped
(`src/gateway/server-methods/attachment-normalize.ts`). The protocol-3 schema predates `policy.attachments`, so
the schema check leaves that field out (`schema_check.NEWER_HELLO_POLICY_FIELDS`).
"""

import base64
import binascii

from .errors import error_shape

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
MAX_IMAGE_BYTES = 6_000_000


def policy(options):
    """The `policy.attachments` hello-ok advertises."""
    max_bytes = int(getattr(options, "attachment_max_bytes", None) or DEFAULT_MAX_BYTES)
    max_image = int(getattr(options, "attachment_max_image_bytes", None) or min(max_bytes, MAX_IMAGE_BYTES))
    return {"maxBytes": max_bytes, "maxImageBytes": min(max_image, max_bytes)}


def _refuse(message, **details):
    from .methods import MethodError   # methods imports chat_agent, which imports this module
    return MethodError(error_shape("INVALID_REQUEST", message, details=details or None))


def check(params, limits):
    """The normalised attachments of a `chat.send` (each with its decoded `bytes`), or MethodError."""
    attachments = params.get("attachments")
    if attachments is None:
        return []
    if not isinstance(attachments, list):
        raise _refuse("attachments must be an array")
    out = []
    for index, item in enumerate(attachments):
        if not isinstance(item, dict):
            raise _refuse("attachment %d is not an object" % index)
        source = item.get("source") if isinstance(item.get("source"), dict) else None
        content = source.get("data") if source else item.get("content")
        mime = (source.get("media_type") if source else item.get("mimeType")) or "application/octet-stream"
        if not content:
            continue   # dropped, as attachment-normalize.ts drops entries without content
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise _refuse("attachment %d: content is not base64" % index)
        is_image = str(mime).startswith("image/") or item.get("type") == "image"
        limit = limits["maxImageBytes"] if is_image else limits["maxBytes"]
        if len(data) > limit:
            raise _refuse("attachment %d (%s) is %d bytes; the limit is %d" % (index, item.get("fileName"), len(data), limit),
                          reason="ATTACHMENT_TOO_LARGE", limit=limit, bytes=len(data))
        out.append({"type": item.get("type") or ("image" if is_image else "file"), "mimeType": mime,
                    "fileName": item.get("fileName"), "bytes": len(data), "sha256": _sha256(data)})
    return out


def _sha256(data):
    import hashlib
    return hashlib.sha256(data).hexdigest()
