"""A freedesktop.org notification server for tests: it owns org.freedesktop.Notifications on the session bus it is
given (a private one the test started), records every notification as one JSON line, and clicks buttons on command.

    python3 notification_server.py --log FILE [--no-actions] [--start-bus]

With --start-bus it starts a private dbus-daemon of its own, serves on it and ends it when it exits (stdin closed or
SIGTERM), so a test that dies leaves nothing behind. Prints `ready ADDRESS` on stdout once it owns the name. Reads
commands on stdin, one a line:
    invoke ID ACTION   emits ActionInvoked(ID, ACTION) then NotificationClosed(ID, 2), as a click does
    close ID           emits NotificationClosed(ID, 1) (expired)
Each received call is appended to the log: {"call": "Notify", "id", "app", "summary", "body", "actions": [[key, label]],
"urgency", "timeout", "hints"} or {"call": "CloseNotification", "id"}.
"""

import argparse
import asyncio
import json
import os
import signal as signals
import subprocess
import sys

from dbus_next import Variant
from dbus_next.aio import MessageBus
from dbus_next.service import ServiceInterface, method, signal

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


class Notifications(ServiceInterface):
    def __init__(self, log_path, actions):
        super().__init__(NAME)
        self.log_path = log_path
        self.actions = actions
        self.next_id = 0

    def record(self, entry):
        with open(self.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

    @method()
    def GetCapabilities(self) -> "as":
        return ["body", "actions", "persistence"] if self.actions else ["body"]

    @method()
    def GetServerInformation(self) -> "ssss":
        return ["refnotify", "openclaw-talk tests", "1.0", "1.2"]

    @method()
    def Notify(self, app: "s", replaces: "u", icon: "s", summary: "s", body: "s", actions: "as",
               hints: "a{sv}", timeout: "i") -> "u":
        self.next_id += 1
        pairs = [[actions[i], actions[i + 1]] for i in range(0, len(actions) - 1, 2)]
        plain = {k: (v.value if isinstance(v, Variant) else v) for k, v in hints.items()}
        plain = {k: (list(v) if isinstance(v, (bytes, bytearray)) else v) for k, v in plain.items()}
        self.record({"call": "Notify", "id": self.next_id, "app": app, "summary": summary, "body": body,
                     "actions": pairs, "urgency": plain.get("urgency"), "timeout": timeout,
                     "hints": {k: v for k, v in plain.items() if isinstance(v, (str, int, bool, float))}})
        return self.next_id

    @method()
    def CloseNotification(self, nid: "u"):
        self.record({"call": "CloseNotification", "id": nid})
        self.NotificationClosed(nid, 3)

    @signal()
    def NotificationClosed(self, nid, reason) -> "uu":
        return [nid, reason]

    @signal()
    def ActionInvoked(self, nid, action) -> "us":
        return [nid, action]


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--no-actions", action="store_true")
    parser.add_argument("--start-bus", action="store_true")
    args = parser.parse_args()
    daemon = None
    if args.start_bus:
        daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = daemon.stdout.readline().strip()

    def end(*_):
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=5)
        os._exit(0)
    signals.signal(signals.SIGTERM, end)
    bus = await MessageBus().connect()
    service = Notifications(args.log, not args.no_actions)
    bus.export(PATH, service)
    await bus.request_name(NAME)
    print("ready " + os.environ.get("DBUS_SESSION_BUS_ADDRESS", ""), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)   # a thread: stdin may be a file epoll refuses
        if not line:
            end()   # stdin closed: whoever started us is gone
        words = line.split()
        if len(words) == 3 and words[0] == "invoke":
            service.ActionInvoked(int(words[1]), words[2])
            service.NotificationClosed(int(words[1]), 2)
        elif len(words) == 2 and words[0] == "close":
            service.NotificationClosed(int(words[1]), 1)
        print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
