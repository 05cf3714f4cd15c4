"""Setup-code bootstrap profiles and who may skip owner approval with one, as upstream decides.

Profiles (openclaw/openclaw src/shared/device-bootstrap-profile.ts): `full` is the default setup code (node and
operator, the mobile-full operator scopes with admin), `limited` the same without admin, `node` the node-only
companion code; `voice-node` (docs cli/qr.md) a room voice node's node + read/talk operator. Over a plain `ws://`
LAN address upstream downgrades a code to `limited`; refgw listens on loopback only and leaves that out.

A bootstrap token is accepted for any role its profile holds, with scopes inside it, bound to the first device
that uses it (src/infra/device-bootstrap.ts `verifyDeviceBootstrapToken`). It is revoked after a handoff, or once
every role of the profile has been redeemed (src/gateway/server/ws-connection/connect-hello.ts), else it lives
out its TTL (10 minutes).

Handoff (silent approval and extra role tokens in `hello-ok.auth.deviceTokens`) is only for the setup-code
clients upstream names (connect-device-metadata.ts `isSetupCodeHandoffBootstrapClient`): the iOS and Android apps
with matching platform and family under a mobile profile, `node-host` under the node-only profile, `node-host` on
esp32 under the voice-node profile. A Linux `node-host` with a `limited` or `full` code is none of these: each of
its roles waits for the owner's approval (or the silent local approval of a loopback connect).
"""

BOOTSTRAP_HANDOFF_OPERATOR_SCOPES = ["operator.approvals", "operator.read", "operator.talk.secrets",
                                     "operator.write"]
PROFILES = {
    "full": {"roles": ["node", "operator"], "scopes": ["operator.admin"] + BOOTSTRAP_HANDOFF_OPERATOR_SCOPES,
             "purpose": "mobile-full"},
    "limited": {"roles": ["node", "operator"], "scopes": list(BOOTSTRAP_HANDOFF_OPERATOR_SCOPES)},
    "node": {"roles": ["node"], "scopes": []},
    "voice-node": {"roles": ["node", "operator"], "scopes": ["operator.read", "operator.talk"]},
}
ALIASES = {"default": "full", "node-only": "node"}


def profile(name):
    """The profile called `name` (aliases allowed); `full` for an unknown or missing name."""
    return PROFILES[ALIASES.get(name, name) if ALIASES.get(name, name) in PROFILES else "full"]


def profile_name(name):
    name = ALIASES.get(name, name)
    return name if name in PROFILES else "full"


def scope_satisfied(granted, required):
    """admin satisfies everything; write satisfies read and talk; otherwise an exact match."""
    granted = set(granted)
    if required in granted or "operator.admin" in granted:
        return True
    return "operator.write" in granted and required in ("operator.read", "operator.talk")


def scopes_allow(requested, allowed):
    """Every requested scope is satisfied by the allowed ones (roleScopesAllow)."""
    return all(scope_satisfied(allowed, s) for s in requested)


def allows(prof, role, scopes):
    """A bootstrap token of this profile may be redeemed for `role` with `scopes`."""
    if role not in prof["roles"]:
        return False
    return not scopes if role == "node" else scopes_allow(scopes, prof["scopes"])


def role_scopes(prof, role):
    """The scopes a handed-off token of `role` carries."""
    return list(prof["scopes"]) if role == "operator" else []


def is_handoff_client(name, client):
    """`isSetupCodeHandoffBootstrapClient`: which setup-code clients skip owner approval (see the module text)."""
    name = profile_name(name)
    client_id = client.get("id")
    platform = str(client.get("platform") or "").strip().lower()
    family = str(client.get("deviceFamily") or "").strip().lower()
    if name in ("full", "limited"):
        if client_id == "openclaw-android":
            return (platform == "android" or platform.startswith("android ")) and family == "android"
        if client_id == "openclaw-ios":
            return (platform.split(" ")[0] in ("ios", "ipados")) and family in ("iphone", "ipad", "ios")
        return False
    if name == "node":
        return client_id == "node-host"
    if name == "voice-node":
        return client_id == "node-host" and platform.split(" ")[0] == "esp32" and family == "esp32"
    return False
