"""The walkthrough's machinery (scripts/walkthrough.py): a private work folder, the built binary run plainly or on a
pseudo-terminal, the reference Gateway's control channel, PulseAudio's streams, `events --follow`, reporting."""

import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEARTBEAT, STALE_AFTER = 5, 10


class StepFailed(Exception):
    pass


def iso(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def process_gone(pid):
    """Whether `pid` has ended: no such process, or a zombie (dead, not yet reaped), as the daemon's status reads it."""
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True


class WalkthroughBase:
    def __init__(self, binary, demo, out_dir):
        self.bin = os.path.abspath(binary)
        self.demo = demo
        self.out_dir = out_dir
        self.work = tempfile.mkdtemp(prefix="oct-walk-")
        os.chmod(self.work, 0o700)
        self.env = self.device_home(self.work)
        self.gateway = None
        self.gateways = []
        self.daemon_pid = None
        self.recorder = None
        self.events = []
        self.events_proc = None
        self.started = time.monotonic()
        self.number = 0

    @staticmethod
    def device_home(folder):
        """The environment of a device whose config, state, socket and status stay in `folder`."""
        env = dict(os.environ)
        for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"), ("XDG_RUNTIME_DIR", "run")):
            os.makedirs(os.path.join(folder, sub), mode=0o700)
            env[var] = os.path.join(folder, sub)
        for var in ("NOTIFY_SOCKET", "INVOCATION_ID", "JOURNAL_STREAM", "OPENCLAW_TALK_TOKEN", "OPENCLAW_TALK_PASSWORD"):
            env.pop(var, None)
        os.makedirs(os.path.join(folder, "config", "openclaw-talk"), mode=0o700)
        with open(os.path.join(folder, "config", "openclaw-talk", "config.json"), "w") as f:
            json.dump({"heartbeatSeconds": HEARTBEAT, "staleAfterSeconds": STALE_AFTER,
                       "connectingStaleSeconds": 30}, f)
        return env

    def start_refgw(self, *args, log="gateway.log"):
        """The bundled reference Gateway with `args`; its startup JSON. Stopped at cleanup."""
        process = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "tools/reference-gateway/refgw.py"), "--quiet", *args],
            stdout=subprocess.PIPE, stderr=open(os.path.join(self.work, log), "w"), text=True)
        self.gateways.append(process)
        return process, json.loads(process.stdout.readline())

    def approve_requests_shown(self, output, count, timeout=60):
        """Approves, through the Gateway's control port, each request id setup shows with `openclaw devices approve
        <id>` (as the owner would on the Gateway host), in the order shown; returns them."""
        approved = []
        deadline = time.monotonic() + timeout
        while len(approved) < count and time.monotonic() < deadline:
            for request_id in re.findall(r"openclaw devices approve ([A-Za-z0-9._:-]+)", "".join(output)):
                if request_id in approved:
                    continue
                pending = [p["requestId"] for p in self.control("pending")["pending"]]
                if request_id not in pending:
                    raise StepFailed("setup showed request %s, which the Gateway does not have pending (%s)"
                                     % (request_id, pending))
                self.control("approve", requestId=request_id)
                approved.append(request_id)
            time.sleep(0.1)
        if len(approved) < count:
            raise StepFailed("setup showed %d of the %d pairing requests: %s" % (len(approved), count, "".join(output)[-800:]))
        return approved

    # -- reporting -----------------------------------------------------------------------------------------

    def step(self, title):
        self.number += 1
        print("\n== %d. %s" % (self.number, title) if self.demo else "-- %s" % title, flush=True)

    def show(self, text):
        if self.demo:
            for line in text.rstrip("\n").splitlines():
                print("   | " + line, flush=True)

    def check(self, ok, what):
        if not ok:
            raise StepFailed(what)
        print(("   ok: " if self.demo else "   ok ") + what, flush=True)

    # -- processes -----------------------------------------------------------------------------------------

    def cli(self, *args, timeout=30, expect=0):
        r = subprocess.run([self.bin, *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        if expect is not None and r.returncode != expect:
            raise StepFailed("`openclaw-talk %s` exited %d (wanted %d): %s%s"
                             % (" ".join(args), r.returncode, expect, r.stdout, r.stderr))
        return r

    def status(self):
        """`status --json`; {} while no daemon answers yet."""
        try:
            return json.loads(self.cli("status", "--json", expect=None).stdout)
        except ValueError:
            return {}

    def wait_for(self, what, predicate, timeout=30, every=0.2):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = predicate()
            if last:
                return last
            time.sleep(every)
        raise StepFailed("timed out after %d s waiting for %s" % (timeout, what))

    def control(self, cmd, port=None, **args):
        port = port or self.gateway_info["controlPort"]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            handle = sock.makefile("rw")
            handle.write(json.dumps(dict(cmd=cmd, **args)) + "\n")
            handle.flush()
            reply = json.loads(handle.readline())
        if not reply.get("ok"):
            raise StepFailed("refgw %s: %s" % (cmd, reply))
        return reply

    def pactl(self, *args):
        return subprocess.run(["pactl", *args], capture_output=True, text=True, timeout=20, check=True).stdout

    def capture_streams(self):
        """Our recording streams in PulseAudio (`pactl list source-outputs`), by application name."""
        text = self.pactl("list", "source-outputs")
        return [block for block in text.split("Source Output #")[1:] if "openclaw-talk" in block.lower()]

    def run_in_terminal(self, args, answer_after=None, answer=None, env=None):
        """Starts the binary on a pseudo-terminal of its own (it is the session leader, the terminal its
        controlling one). Returns (pid, master fd, output list that a reader thread fills)."""
        pid, master = pty.fork()
        if pid == 0:
            os.execve(self.bin, [self.bin, *args], env or self.env)
        output = []
        stop = threading.Event()

        def reader():
            answered = False
            while not stop.is_set():
                ready, _, _ = select.select([master], [], [], 0.1)
                if not ready:
                    continue
                try:
                    data = os.read(master, 4096)
                except OSError:
                    return
                if not data:
                    return
                output.append(data.decode("utf-8", "replace"))
                if answer_after and not answered and answer_after in "".join(output):
                    answered = True
                    os.write(master, answer.encode())

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        return pid, master, output, stop, thread

    def follow_events(self):
        self.events_proc = subprocess.Popen([self.bin, "events", "--follow"], env=self.env, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, text=True)

        def reader(proc):
            for line in proc.stdout:
                try:
                    self.events.append(json.loads(line))
                except ValueError:
                    pass

        threading.Thread(target=reader, args=(self.events_proc,), daemon=True).start()

    def events_of(self, kind, since=0):
        return [e for e in self.events[since:] if e.get("event") == kind]

    def cleanup(self):
        if self.events_proc:
            self.events_proc.kill()
        if self.daemon_pid:
            try:
                os.kill(self.daemon_pid, signal.SIGKILL)
                os.waitpid(self.daemon_pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        lock = os.path.join(self.env["XDG_STATE_HOME"], "openclaw-talk", "daemon.lock")
        try:
            pid = int(open(lock).read().strip() or 0)
            if pid:
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass
        for gateway in self.gateways:
            gateway.terminate()
            gateway.wait(timeout=10)
        shutil.rmtree(self.work, ignore_errors=True)
