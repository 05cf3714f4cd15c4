"""Verification of the Ed25519 device proof a client sends in `connect.params.device`.

The signed string is pipe-joined (fact sheet §2.3):
v2|deviceId|clientId|clientMode|role|scopesCSV|signedAtMs|token|nonce
v3|...same...|platform|deviceFamily   (platform and deviceFamily trimmed, ASCII-lowercased)
"""

import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .codec import b64url_decode
from .errors import device_auth_failure

DEFAULT_SKEW_MS = 2 * 60 * 1000


def normalize_metadata(value):
    """Trims and lowercases ASCII A-Z only, as v3 payloads require; absent becomes empty."""
    if not isinstance(value, str):
        return ""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in value.strip())


def signature_token(auth):
    """The token the Gateway signs against: token, else deviceToken, else bootstrapToken, else ""."""
    auth = auth or {}
    for key in ("token", "deviceToken", "bootstrapToken"):
        if auth.get(key) is not None:
            return auth[key]
    return ""


def signed_payload(version, device_id, params, signed_at, nonce):
    """Rebuilds the string a client must have signed, from what it declared in `params`."""
    client = params.get("client") or {}
    fields = [version, device_id, str(client.get("id", "")), str(client.get("mode", "")),
              params.get("role") or "operator", ",".join(params.get("scopes") or []),
              str(signed_at), signature_token(params.get("auth")), nonce]
    if version == "v3":
        fields += [normalize_metadata(client.get("platform")),
                   normalize_metadata(client.get("deviceFamily"))]
    return "|".join(fields)


def device_id_for(public_key_raw):
    """Lowercase hex SHA-256 of the raw 32-byte public key."""
    return hashlib.sha256(public_key_raw).hexdigest()


def verify_device_proof(params, challenge_nonce, challenge_ts, now_ms, *,
                        skew_ms=DEFAULT_SKEW_MS, accepted_versions=("v3", "v2"),
                        require_challenge_ts=True):
    """Checks `params.device` against the challenge; returns the signature version that matched.

    Raises `ConnectRejected` with the `DEVICE_AUTH_*` detail code of the first failed check.
    """
    device = params.get("device") or {}
    nonce = device.get("nonce")
    if not nonce:
        raise device_auth_failure("DEVICE_AUTH_NONCE_REQUIRED", "device nonce required",
                                  "nonce-missing")
    try:
        public_raw = b64url_decode(device.get("publicKey", ""))
        if len(public_raw) != 32:
            raise ValueError("wrong length")
        public_key = Ed25519PublicKey.from_public_bytes(public_raw)
    except ValueError:
        raise device_auth_failure("DEVICE_AUTH_PUBLIC_KEY_INVALID",
                                  "device public key is not a base64url raw Ed25519 key",
                                  "public-key-invalid") from None
    if device.get("id") != device_id_for(public_raw):
        raise device_auth_failure("DEVICE_AUTH_DEVICE_ID_MISMATCH",
                                  "device id does not match the public key", "device-id-mismatch")
    if nonce != challenge_nonce:
        raise device_auth_failure("DEVICE_AUTH_NONCE_MISMATCH",
                                  "device nonce does not match the challenge", "nonce-mismatch")
    signed_at = device.get("signedAt")
    if not isinstance(signed_at, int) or abs(now_ms - signed_at) > skew_ms:
        raise device_auth_failure("DEVICE_AUTH_SIGNATURE_EXPIRED",
                                  "device signature expired (signedAt outside the allowed skew)",
                                  "signature-expired")
    if require_challenge_ts and signed_at != challenge_ts:
        # Stricter than a production Gateway: the fact sheet says signedAt must be the challenge ts.
        raise device_auth_failure("DEVICE_AUTH_INVALID",
                                  "device.signedAt must equal the connect.challenge ts",
                                  "signed-at-not-challenge-ts")
    try:
        signature = b64url_decode(device.get("signature", ""))
    except ValueError:
        signature = b""
    for version in accepted_versions:
        payload = signed_payload(version, device["id"], params, signed_at, nonce)
        try:
            public_key.verify(signature, payload.encode("utf-8"))
            return version
        except InvalidSignature:
            continue
    raise device_auth_failure("DEVICE_AUTH_SIGNATURE_INVALID", "device signature invalid",
                              "signature-invalid")
