"""Admission of a `connect` request: protocol range, device proof, credentials, pairing, hello-ok.

The checks run in this order; the first failure answers the request:
injected faults -> role/scopes -> protocol -> rate limit -> device proof -> credentials -> pairing.
"""

from . import VERSION
from .auth import authenticate
from .codec import now_ms
from .device_proof import verify_device_proof
from .errors import ConnectRejected, CLOSE_PROTOCOL

OPERATOR_SCOPES = {"operator.read", "operator.write", "operator.admin", "operator.approvals",
                   "operator.pairing", "operator.questions", "operator.talk",
                   "operator.talk.secrets"}
BOOTSTRAP_PROFILES = {
    "default": ["operator.admin", "operator.approvals", "operator.read", "operator.talk.secrets",
                "operator.write"],
    "limited": ["operator.approvals", "operator.read", "operator.talk.secrets", "operator.write"],
    "voice-node": ["operator.read", "operator.talk"],
}


class Admission:
    """What a successful connect established for the connection."""

    def __init__(self, role, scopes, device_id, client, protocol, hello):
        self.role = role
        self.scopes = scopes
        self.device_id = device_id
        self.client = client
        self.protocol = protocol
        self.hello = hello


def admit(gateway, conn_id, params, challenge):
    """Runs every connect check; returns an `Admission` or raises `ConnectRejected`."""
    options = gateway.options
    forced = gateway.faults.next_connect_failure()
    if forced is not None:
        raise forced
    client = params.get("client") or {}
    role = params.get("role") or "operator"
    scopes = list(params.get("scopes") or [])
    _check_role_and_scopes(role, scopes)
    protocol = _negotiate_protocol(options.protocol, params, role, client)
    device = params.get("device")
    limiter_key = (device or {}).get("id") or "addr:" + conn_id
    gateway.limiter.check(limiter_key)
    try:
        device_id = _verify_device(gateway, params, challenge, client)
        result = authenticate(params, device_id, gateway.auth_config, gateway.state)
    except ConnectRejected as rejected:
        if rejected.counts_as_auth_failure:
            gateway.limiter.record_failure(limiter_key)
        raise
    if device_id is not None:
        _require_pairing(gateway, params, device_id, role, scopes, client, result)
    auth = _issue_tokens(gateway, params, device_id, role, scopes, result)
    hello = {"type": "hello-ok", "protocol": options.protocol,
             "server": {"version": VERSION, "connId": conn_id},
             "features": {"methods": gateway.method_names(), "events": gateway.event_names()},
             "snapshot": gateway.snapshot(), "auth": auth,
             "policy": {"maxPayload": options.max_payload,
                        "maxBufferedBytes": options.max_buffered_bytes,
                        "tickIntervalMs": options.tick_interval_ms}}
    return Admission(role, scopes, device_id, client, protocol, hello)


def _check_role_and_scopes(role, scopes):
    if role not in ("operator", "node"):
        raise ConnectRejected("INVALID_REQUEST", "unknown role: %s" % role,
                              details={"code": "AUTH_UNAUTHORIZED", "reason": "unknown-role"})
    unknown = [s for s in scopes if s not in OPERATOR_SCOPES]
    if role == "operator" and unknown:
        raise ConnectRejected("INVALID_REQUEST", "unknown operator scope: %s" % unknown[0],
                              details={"code": "AUTH_SCOPE_MISMATCH", "unknownScopes": unknown})


def _negotiate_protocol(server_protocol, params, role, client):
    low, high = params.get("minProtocol"), params.get("maxProtocol")
    if not isinstance(low, int) or not isinstance(high, int):
        raise ConnectRejected("INVALID_REQUEST", "minProtocol/maxProtocol must be integers")
    if low <= server_protocol <= high:
        return server_protocol
    # N-1 is allowed only for real nodes (role and mode both "node") and for probes.
    n_minus_1 = (role == "node" and client.get("mode") == "node") or client.get("mode") == "probe"
    if n_minus_1 and low <= server_protocol - 1 <= high:
        return server_protocol - 1
    details = {"code": "PROTOCOL_MISMATCH", "clientMinProtocol": low, "clientMaxProtocol": high,
               "expectedProtocol": server_protocol,
               "minimumProbeProtocol": server_protocol - 1}
    raise ConnectRejected("INVALID_REQUEST",
                          "protocol mismatch: client speaks %d-%d, gateway speaks %d"
                          % (low, high, server_protocol), details=details,
                          close_code=CLOSE_PROTOCOL, close_reason="protocol mismatch")


def _verify_device(gateway, params, challenge, client):
    if params.get("device") is None:
        if client.get("id") == "gateway-client" and client.get("mode") == "backend":
            return None  # the reserved loopback backend helper may omit the device proof
        raise ConnectRejected("INVALID_REQUEST", "device identity required",
                              details={"code": "DEVICE_IDENTITY_REQUIRED"},
                              counts_as_auth_failure=True)
    options = gateway.options
    verify_device_proof(params, challenge["nonce"], challenge["ts"], now_ms(),
                        skew_ms=options.signature_skew_ms,
                        accepted_versions=gateway.faults.accepted_signature_versions(
                            options.signature_versions),
                        require_challenge_ts=options.require_challenge_ts)
    return params["device"]["id"]


def _require_pairing(gateway, params, device_id, role, scopes, client, result):
    verdict = gateway.pairing.take_verdict(device_id)
    if verdict is not None:
        kind, request_id = verdict
        code = "PAIRING_REJECTED" if kind == "rejected" else "PAIRING_EXPIRED"
        raise ConnectRejected("NOT_PAIRED", "pairing %s (requestId: %s)" % (kind, request_id),
                              details={"code": code, "requestId": request_id,
                                       "deviceId": device_id,
                                       "recommendedNextStep": "review_auth_configuration",
                                       "retryable": kind == "expired",
                                       "pauseReconnect": kind == "rejected"})
    record = gateway.state.token_record(device_id, role)
    if record is not None and set(scopes) <= set(record["scopes"]):
        return
    known = gateway.state.device(device_id)
    if known is None:
        reason = "not-paired"
    elif record is None:
        reason = "role-upgrade"
    else:
        reason = "scope-upgrade"
    metadata = {"publicKey": params["device"]["publicKey"], "displayName": client.get("displayName"),
                "platform": client.get("platform"), "deviceFamily": client.get("deviceFamily"),
                "clientId": client.get("id"), "clientMode": client.get("mode")}
    is_bootstrap = result.method == "bootstrap"
    request, approved = gateway.pairing.request(device_id, metadata, role, scopes, reason,
                                                is_bootstrap)
    if approved:
        return
    approved_roles = sorted((known or {}).get("roles", {}))
    details = {"code": "PAIRING_REQUIRED", "reason": reason, "requestId": request["requestId"],
               "remediationHint": "approve this device: openclaw devices approve %s"
                                  % request["requestId"],
               "recommendedNextStep": "wait_then_retry", "retryable": True,
               # A setup-code bootstrap keeps reconnecting with the same token while it waits;
               # other devices pause until an operator resolves the request.
               "pauseReconnect": not is_bootstrap, "waitForResolution": True,
               "deviceId": device_id, "requestedRole": role, "requestedScopes": scopes,
               "approvedRoles": approved_roles,
               "approvedScopes": sorted((record or {}).get("scopes", []))}
    raise ConnectRejected("NOT_PAIRED", "pairing required", details=details, retryable=True,
                          close_reason="pairing required: %s (requestId: %s)"
                                       % (reason, request["requestId"]))


def _issue_tokens(gateway, params, device_id, role, scopes, result):
    auth = {"role": role, "scopes": scopes}
    if device_id is None:
        return auth
    client = params.get("client") or {}
    metadata = {"publicKey": params["device"]["publicKey"], "displayName": client.get("displayName"),
                "platform": client.get("platform"), "deviceFamily": client.get("deviceFamily"),
                "clientId": client.get("id"), "clientMode": client.get("mode")}
    record = gateway.state.pair(device_id, metadata, role, scopes)
    auth.update({"deviceToken": record["token"], "issuedAtMs": record["issuedAtMs"]})
    if result.method == "bootstrap":
        gateway.state.consume_bootstrap(result.bootstrap_token, device_id)
        profile = gateway.state.bootstrap_record(result.bootstrap_token).get("profile", "default")
        operator = gateway.state.pair(device_id, metadata, "operator",
                                      BOOTSTRAP_PROFILES.get(profile, BOOTSTRAP_PROFILES["default"]))
        auth["deviceTokens"] = [{"deviceToken": operator["token"], "role": "operator",
                                 "scopes": operator["scopes"],
                                 "issuedAtMs": operator["issuedAtMs"]}]
    return auth

