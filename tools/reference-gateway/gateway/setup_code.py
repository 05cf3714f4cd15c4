"""Setup codes: base64url (no padding) of UTF-8 JSON {url, bootstrapToken, tlsFingerprint?}."""

import json

from .codec import b64url_decode, b64url_encode


def encode_setup_code(url, bootstrap_token, tls_fingerprint=None):
    """The code a user pastes into `openclaw-talk setup`."""
    payload = {"url": url, "bootstrapToken": bootstrap_token}
    if tls_fingerprint:
        payload["tlsFingerprint"] = tls_fingerprint
    text = json.dumps(payload, separators=(",", ":"))
    return b64url_encode(text.encode("utf-8"))


def decode_setup_code(code):
    """The JSON object inside a setup code (used by tests)."""
    return json.loads(b64url_decode(code.strip()).decode("utf-8"))
