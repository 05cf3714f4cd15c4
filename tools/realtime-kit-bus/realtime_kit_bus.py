"""A private system bus with Debian's rtkit-daemon on it, for tests of the client that asks rtkit for realtime threads.

    python3 realtime_kit_bus.py --dir DIR --log FILE [--polkit allow|deny|absent] [--no-rtkit] [-- RTKIT-ARGS...]

Starts a dbus-daemon of type system listening on DIR/system_bus_socket (DIR made readable by every user, as the
client under test runs as another user and rtkit drops to its own), a stand-in for polkit's authority on it (rtkit
asks polkit before it grants; polkit's policy for rtkit answers yes only to a user's active login session, which a
machine without logind has none of), then rtkit-daemon with RTKIT-ARGS. Prints `ready ADDRESS` once rtkit owns its
name (or at once with --no-rtkit). The log gets rtkit's own lines (its stderr, through a pipe: rtkit limits its file
size to 0, so a file as its stderr kills it with SIGXFSZ) and each polkit check as `polkit ACTION uid=U allowed=B`.
Ends rtkit and the bus when stdin closes or on SIGTERM.
"""

import argparse
import asyncio
import os
import signal as signals
import subprocess
import sys
import threading

from dbus_next.aio import MessageBus
from dbus_next.service import ServiceInterface, method

RTKIT = "/usr/libexec/rtkit-daemon"
RTKIT_NAME = "org.freedesktop.RealtimeKit1"

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


class Authority(ServiceInterface):
    """polkit's CheckAuthorization as rtkit calls it: (subject, action, details, flags, cancellation id)."""

    def __init__(self, allow, log):
        super().__init__("org.freedesktop.PolicyKit1.Authority")
        self.allow = allow
        self.log = log

    @method()
    def CheckAuthorization(self, subject: "(sa{sv})", action: "s", details: "a{ss}", flags: "u",
                           cancel: "s") -> "(bba{ss})":
        uid = subject[1].get("uid")
        self.log(f"polkit {action} uid={uid.value if uid is not None else '?'} allowed={self.allow}")
        return [self.allow, False, {}]


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--polkit", choices=["allow", "deny", "absent"], default="allow")
    parser.add_argument("--no-rtkit", action="store_true")
    parser.add_argument("rtkit_args", nargs="*")
    args = parser.parse_args()

    log_lock = threading.Lock()

    def log(line):
        with log_lock, open(args.log, "a", encoding="utf-8") as out:
            out.write(line.rstrip("\n") + "\n")

    os.chmod(args.dir, 0o755)
    socket = os.path.join(args.dir, "system_bus_socket")
    config = os.path.join(args.dir, "system-bus.conf")
    with open(config, "w", encoding="utf-8") as out:
        out.write(BUS_CONFIG.format(socket=socket))
    children = []

    def end(*_):
        for child in reversed(children):
            child.terminate()
        for child in reversed(children):
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                child.kill()
        os._exit(0)

    signals.signal(signals.SIGTERM, end)
    bus_daemon = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    children.append(bus_daemon)
    address = bus_daemon.stdout.readline().strip()
    bus = await MessageBus(bus_address=address).connect()
    if args.polkit != "absent":
        bus.export("/org/freedesktop/PolicyKit1/Authority", Authority(args.polkit == "allow", log))
        await bus.request_name("org.freedesktop.PolicyKit1")
    if not args.no_rtkit:
        rtkit = subprocess.Popen([RTKIT, "--stderr"] + args.rtkit_args, env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        children.append(rtkit)
        threading.Thread(target=lambda: [log(line) for line in rtkit.stderr], daemon=True).start()
        introspection = await bus.introspect("org.freedesktop.DBus", "/org/freedesktop/DBus")
        names = bus.get_proxy_object("org.freedesktop.DBus", "/org/freedesktop/DBus", introspection) \
            .get_interface("org.freedesktop.DBus")
        for _ in range(200):   # rtkit owns its name within a second; 20 s is a hang
            if await names.call_name_has_owner(RTKIT_NAME):
                break
            if rtkit.poll() is not None:
                log(f"rtkit-daemon ended with {rtkit.returncode} before owning {RTKIT_NAME}")
                break
            await asyncio.sleep(0.1)
    print("ready " + address, flush=True)
    loop = asyncio.get_running_loop()
    while await loop.run_in_executor(None, sys.stdin.readline):   # a thread: stdin may be a file epoll refuses
        pass
    end()


if __name__ == "__main__":
    asyncio.run(main())
