"""Which node commands the Gateway forwards (`src/gateway/node-command-policy.ts`): a command must be declared in
`connect.commands` and allowed for the node's platform. A node counts as Linux only with `platform: linux` and
`deviceFamily: Linux`, case-insensitive (`resolveGatewayClientPlatformIdentity`; upstream-gateway.md §2); the default
Linux ceiling is `system.notify` and `computer.act`, and `talk.ptt.*` are added for a node advertising the `talk` cap.
Commands outside these families keep refgw's older rule (declared is enough), so tests of other commands still run.
"""

PLATFORM_CEILINGS = {
    "linux": {"system.notify", "computer.act"},
    "macos": {"system.notify", "system.run", "system.which"},
    "ios": {"system.notify", "chat.push"},
    "android": {"system.notify"},
}
TALK_COMMANDS = {"talk.ptt.start", "talk.ptt.stop", "talk.ptt.cancel", "talk.ptt.once"}
POLICED = set().union(*PLATFORM_CEILINGS.values()) | TALK_COMMANDS


def platform_identity(client):
    """`linux` for a Linux node, else its platform's name when known, else `unknown`."""
    platform = str(client.get("platform") or "").strip().lower()
    family = str(client.get("deviceFamily") or "").strip().lower()
    if platform == "linux" and family == "linux":
        return "linux"
    if platform in ("macos", "darwin") and family in ("mac", "macos"):
        return "macos"
    if platform == "ios" and family in ("iphone", "ipad"):
        return "ios"
    if platform == "android":
        return "android"
    return "unknown"


def allowed(node, command):
    """Whether the Gateway forwards `command` to `node` (a Connection)."""
    if command not in node.commands:
        return False
    if command not in POLICED:
        return True
    if command in TALK_COMMANDS:
        return "talk" in node.caps
    return command in PLATFORM_CEILINGS.get(platform_identity(node.client or {}), set())
