"""Admission of a `connect` request: protocol range, device proof, credentials, pairing, hello-ok.

The checks run in this order; the first failure answers the request:
injected faults -> role/scopes -> protocol -> rate limit -> device proof -> credentials -> pairing.
"""

from . import VERSION, bootstrap, chat_attachments
from .auth import authenticate
from .codec import now_ms
from .device_proof import verify_device_proof
from .errors import ConnectRejected, CLOSE_PROTOCOL

OPERATOR_SCOPES = {"operator.read", "operator.write", "operator.admin", "operator.approvals",
                   "operator.pairing", "operator.questions", "operator.talk",
                   "operator.talk.secrets"}
# What each pairing reason means (packages/gateway-protocol/src/connect-error-details.ts).
PAIRING_REASONS = {
    "not-paired": ("device is not approved yet", "Approve this device from the pending pairing requests."),
    "role-upgrade": ("device is asking for a higher role than currently approved",
                     "Review the requested role upgrade, then approve the pending request."),
    "scope-upgrade": ("device is asking for more scopes than currently approved",
                      "Review the requested scopes, then approve the pending upgrade."),
}


class Admission:
    """What a successful connect established for the connection."""

    def __init__(self, role, scopes, device_id, client, protocol, auth):
        self.role = role
        self.scopes = scopes
        self.device_id = device_id
        self.client = client
        self.protocol = protocol   # negotiated (N-1 for nodes); hello-ok reports the server's
        self.auth = auth           # the hello-ok `auth` object


def admit(gateway, conn_id, params, challenge):
    """Runs every connect check; returns an `Admission` or raises `ConnectRejected`."""
    forced = gateway.faults.next_connect_failure()
    if forced is not None:
        raise forced
    _check_shape(params)
    client = params.get("client") or {}
    role = params.get("role") or "operator"
    scopes = list(params.get("scopes") or [])
    _check_role_and_scopes(role, scopes)
    protocol = _negotiate_protocol(gateway.options.protocol, params, role, client)
    device = params.get("device")
    # Keyed by device: every client here comes from loopback, so one address-wide limit would
    # lock out every test client at once. Device-less attempts are keyed per connection.
    limiter_key = (device or {}).get("id") or "conn:" + conn_id
    gateway.limiter.check(limiter_key)
    try:
        device_id = _verify_device(gateway, params, challenge, client)
        result = authenticate(params, device_id, gateway.auth_config, gateway.state)
    except ConnectRejected as rejected:
        if rejected.counts_as_auth_failure:
            gateway.limiter.record_failure(limiter_key)
        raise
    handoff = None
    if device_id is not None:
        handoff = _require_pairing(gateway, params, device_id, role, scopes, result)
    auth = _issue_tokens(gateway, params, device_id, role, scopes, result, handoff)
    return Admission(role, scopes, device_id, client, protocol, auth)


def hello_ok(gateway, conn_id, admission):
    """The hello-ok payload; built after the client joined presence so the snapshot lists it."""
    options = gateway.options
    return {"type": "hello-ok", "protocol": options.protocol,
            "server": {"version": VERSION, "connId": conn_id},
            "features": {"methods": gateway.method_names(), "events": gateway.event_names()},
            "snapshot": gateway.snapshot(), "auth": admission.auth,
            "policy": {"maxPayload": options.max_payload,
                       "maxBufferedBytes": options.max_buffered_bytes,
                       "tickIntervalMs": options.tick_interval_ms,
                       "attachments": chat_attachments.policy(options)}}


def _check_shape(params):
    """The types the checks below rely on (the schema says more, but may be absent)."""
    def fail(what):
        raise ConnectRejected("INVALID_REQUEST", "invalid connect params: " + what)
    if not isinstance(params, dict):
        fail("params must be an object")
    for key in ("client", "auth", "device"):
        if key in params and not isinstance(params[key], dict):
            fail("%s must be an object" % key)
    if not isinstance(params.get("role", "operator"), str):
        fail("role must be a string")
    scopes = params.get("scopes", [])
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        fail("scopes must be an array of strings")
    for key, value in (params.get("auth") or {}).items():
        if not isinstance(value, str):
            fail("auth.%s must be a string" % key)
    device = params.get("device") or {}
    for key in ("id", "publicKey", "signature", "nonce"):
        if key in device and not isinstance(device[key], str):
            fail("device.%s must be a string" % key)
    client = params.get("client") or {}
    for key, value in client.items():
        if not isinstance(value, str):
            fail("client.%s must be a string" % key)


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


def _require_pairing(gateway, params, device_id, role, scopes, result):
    """Passes a device paired for the role and scopes; approves silently where upstream does; else raises
    PAIRING_REQUIRED with the pending request (src/gateway/server/ws-connection/connect-device-pairing.ts,
    connect-pairing-approval-plan.ts). Returns the bootstrap profile name when a setup-code handoff happened."""
    state = gateway.state
    record = state.token_record(device_id, role)
    if record is not None and bootstrap.scopes_allow(scopes, record["scopes"]):
        return None
    verdict = gateway.pairing.take_verdict(device_id, role)
    stale = gateway.pairing.expire_stale(device_id)
    if verdict is None and stale is not None:
        verdict = ("expired", stale)
    if verdict is not None:
        raise _verdict_rejection(*verdict, device_id)
    known = state.device(device_id)
    reason = "not-paired" if known is None else ("role-upgrade" if record is None else "scope-upgrade")
    client = params.get("client") or {}
    is_bootstrap = result.method == "bootstrap"
    profile_name = (state.bootstrap_record(result.bootstrap_token) or {}).get("profile") if is_bootstrap else None
    prof = bootstrap.profile(profile_name) if is_bootstrap else None
    if (is_bootstrap and role == "operator" and gateway.options.bootstrap_order == "node-first"
            and "node" in prof["roles"] and state.token_record(device_id, "node") is None):
        # The newest upstream holds a setup code's operator connect until the same code's node request has been
        # approved and redeemed (fact sheet upstream-gateway.md §1, "Order"): no request of its own yet.
        pending = gateway.pairing.for_device(device_id)
        raise _pairing_required(reason, pending["requestId"] if pending else None, device_id, role, scopes,
                                known, record, held=True)
    # Setup-code handoff: only the clients connect-device-metadata.ts names (bootstrap.py).
    handoff = (is_bootstrap and role == "node" and not scopes and client.get("mode") == "node"
               and known is None and bootstrap.is_handoff_client(profile_name, client))
    # Silent local approval (handshake-auth-helpers.ts `shouldAllowSilentLocalPairing`): loopback connects, an SSH
    # port-forward included, unless refgw acts as a remote Gateway (--remote); a paired device adding a role other
    # than operator only for its first node role.
    local = (not gateway.options.remote
             and (known is None or role == "operator" or (role == "node" and record is None)))
    request, approved = gateway.pairing.request(device_id, _device_metadata(params), role, scopes, reason,
                                                is_bootstrap, silent=handoff or local)
    if approved:
        return profile_name if handoff else None
    raise _pairing_required(reason, request["requestId"], device_id, role, scopes, known, record,
                            bootstrap_node=is_bootstrap and role == "node" and known is None)


def _pairing_required(reason, request_id, device_id, role, scopes, known, record, held=False,
                      bootstrap_node=False):
    """NOT_PAIRED with PAIRING_REQUIRED details and the close reason upstream builds (connect-error-details.ts)."""
    requirement, hint = PAIRING_REASONS[reason]
    if held:
        requirement = "the setup code's node role must be approved and redeemed first"
    details = {"code": "PAIRING_REQUIRED", "reason": reason, "remediationHint": hint,
               "deviceId": device_id, "requestedRole": role, "requestedScopes": scopes}
    if request_id:
        details["requestId"] = request_id
    if known is not None:
        details["approvedRoles"] = sorted(known.get("roles", {}))
        approved_scopes = sorted({s for r in known.get("roles", {}).values() for s in r.get("scopes", [])})
        if approved_scopes:
            details["approvedScopes"] = approved_scopes
    if bootstrap_node or held:
        # A setup-code node keeps retrying while its request waits (connect-device-pairing.ts
        # `retryAfterBootstrapPairingApproval`); others carry no reconnect advice.
        details.update({"recommendedNextStep": "wait_then_retry", "retryable": True, "pauseReconnect": False})
    message = "pairing required: " + requirement
    return ConnectRejected("NOT_PAIRED", message, details=details,
                           close_reason=message + (" (requestId: %s)" % request_id if request_id else ""))


def _verdict_rejection(kind, request_id, device_id):
    """PAIRING_REJECTED (stop and tell the user) or PAIRING_EXPIRED (retry for a new request)."""
    expired = kind == "expired"
    details = {"code": "PAIRING_EXPIRED" if expired else "PAIRING_REJECTED",
               "requestId": request_id, "deviceId": device_id,
               "recommendedNextStep": "wait_then_retry" if expired else "review_auth_configuration",
               "retryable": expired, "pauseReconnect": not expired}
    return ConnectRejected("NOT_PAIRED", "pairing %s (requestId: %s)" % (kind, request_id),
                           details=details)


def _device_metadata(params):
    """What a device record remembers about the client that paired it."""
    client = params.get("client") or {}
    return {"publicKey": params["device"]["publicKey"], "displayName": client.get("displayName"),
            "platform": client.get("platform"), "deviceFamily": client.get("deviceFamily"),
            "clientId": client.get("id"), "clientMode": client.get("mode")}


def _issue_tokens(gateway, params, device_id, role, scopes, result, handoff):
    """This role's device token; after a setup-code handoff, the profile's other roles' tokens too
    (connect-device-tokens.ts). A bootstrap token is revoked after a handoff, or once every role of its profile has
    been redeemed (connect-hello.ts); until then it stays usable for the profile's other roles."""
    auth = {"role": role, "scopes": scopes}
    if device_id is None:
        return auth
    state = gateway.state
    metadata = _device_metadata(params)
    record = state.pair(device_id, metadata, role, scopes)
    auth.update({"deviceToken": record["token"], "issuedAtMs": record["issuedAtMs"]})
    if result.method == "bootstrap":
        prof = bootstrap.profile((state.bootstrap_record(result.bootstrap_token) or {}).get("profile"))
        if handoff is not None:
            tokens = [{"deviceToken": record["token"], "role": role, "scopes": scopes,
                       "issuedAtMs": record["issuedAtMs"]}]
            for other in prof["roles"]:
                if other == role:
                    continue
                extra = state.pair(device_id, metadata, other, bootstrap.role_scopes(prof, other))
                tokens.append({"deviceToken": extra["token"], "role": other, "scopes": extra["scopes"],
                               "issuedAtMs": extra["issuedAtMs"]})
            auth["deviceTokens"] = tokens
            state.revoke_bootstrap(result.bootstrap_token)
        else:
            state.redeem_bootstrap(result.bootstrap_token, role, prof["roles"])
    return auth
