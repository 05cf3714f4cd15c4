"""Shared pieces of the self-test: a refgw child process, its control channel, test helpers."""

import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest

from websockets.exceptions import ConnectionClosed

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from minimal_client import Client, handshake  # noqa: E402
from shared_dir import SCHEMA, is_ci, shared_dir  # noqa: E402

REFGW = os.path.join(HERE, "refgw.py")
SHARED_TOKEN = "shared-secret-for-selftest"
READ_WRITE = ["operator.read", "operator.write"]


class GatewayProcess:
    """A refgw child process, its startup JSON and its control channel."""

    def __init__(self, *args):
        self.args = list(args)
        self.stderr = tempfile.NamedTemporaryFile(prefix="refgw-stderr-", delete=False)
        self.proc = subprocess.Popen([sys.executable, REFGW, *self.args], stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True)
        self.stderr.close()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("refgw did not start: " + self.stderr_text())
        self.info = json.loads(line)
        self.url = self.info["url"]
        self.control_port = self.info["controlPort"]

    def control(self, line):
        """Sends one control line; returns the decoded reply."""
        if not isinstance(line, str):
            line = json.dumps(line)
        with socket.create_connection(("127.0.0.1", self.control_port), timeout=10) as sock:
            handle = sock.makefile("rw")
            handle.write(line + "\n")
            handle.flush()
            return json.loads(handle.readline())

    def stop(self):
        """Shuts the Gateway down through the control channel; returns its exit status."""
        if self.proc.poll() is None:
            try:
                self.control("shutdown")
            except OSError:
                self.proc.terminate()
        try:
            return self.proc.wait(timeout=10)
        finally:
            self.proc.stdout.close()

    def stderr_text(self):
        with open(self.stderr.name, encoding="utf-8", errors="replace") as handle:
            return handle.read()


async def poll_until(condition, what, timeout=10):
    """Waits until `condition()` is true, checking every 20 ms (the bound only catches a broken
    Gateway)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("%s: not within %s s" % (what, timeout))
        await asyncio.sleep(0.02)


def require_schema(test, info, unchecked):
    """Returns when refgw (its startup `info`) checks frames against the schema. Without the schema
    the test is skipped, naming what went unchecked (a failure under CI); a schema the tests can see
    but refgw did not load fails the test, since every frame would then pass unchecked."""
    if info["schema"] is not None:
        return
    expected = shared_dir() / SCHEMA
    if expected.is_file():
        test.fail("refgw started without the schema at %s, which the tests found: refgw and the "
                  "tests must find ../shared by the same rule (shared_dir.py)" % expected)
    reason = ("%s not checked: %s (Gateway JSON Schema) is missing: put the project's shared/ "
              "folder beside the checkout or set OPENCLAW_TALK_SHARED" % (unchecked, expected))
    if is_ci():
        test.fail(reason + " (CI=true requires it)")
    test.skipTest(reason)


def error_code(response):
    return (response.get("error") or {}).get("details", {}).get("code")


async def close_code(client, timeout=5):
    """Waits for the server to close the socket; returns (code, reason)."""
    try:
        while True:
            await client.recv(timeout)
    except ConnectionClosed as closed:
        frame = closed.rcvd
        return (frame.code, frame.reason) if frame else (None, "")


class GatewayTestCase(unittest.IsolatedAsyncioTestCase):
    """Async test case whose blocking control calls do not trip asyncio's slow-callback log."""

    async def asyncSetUp(self):
        asyncio.get_running_loop().slow_callback_duration = 30
        self.clients = []

    async def asyncTearDown(self):
        for client in self.clients:
            await client.close()

    async def handshake(self, url, identity, **kwargs):
        """A full handshake whose socket is closed when the test ends."""
        client, response = await handshake(url, identity, **kwargs)
        self.clients.append(client)
        return client, response

    async def stop(self, gateway):
        """Closes this test's sockets, then stops `gateway` (else its close handshake would wait
        on a test loop that is blocked in the control call); returns the exit status."""
        for client in self.clients:
            await client.close()
        return gateway.stop()

    async def open(self, url):
        client = await Client.open(url)
        self.clients.append(client)
        return client


def decode_setup_code(code):
    """The JSON inside a setup code, decoded here rather than with refgw's own code."""
    return json.loads(base64.urlsafe_b64decode(code + "=" * (-len(code) % 4)))
