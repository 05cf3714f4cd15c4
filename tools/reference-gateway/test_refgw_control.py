"""The control channel's reply matching: a tagged command's reply carries its tag back, whatever the
command and however it ends, so a client can never take another command's reply for its own."""

import asyncio
import contextlib
import io
import json
import socket
import unittest

from gateway.control import ControlServer
from refgw_harness import GatewayProcess


class ControlTagTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gateway = GatewayProcess("--quiet")

    @classmethod
    def tearDownClass(cls):
        cls.gateway.stop()

    def exchange(self, lines):
        """Sends `lines` on one connection; returns one decoded reply per line, in order."""
        with socket.create_connection(("127.0.0.1", self.gateway.control_port), timeout=10) as sock:
            handle = sock.makefile("rw")
            for line in lines:
                handle.write(line + "\n")
            handle.flush()
            return [json.loads(handle.readline()) for _ in lines]

    def test_a_tagged_reply_carries_its_tag_for_words_json_and_refusals(self):
        replies = self.exchange(["@a1 status", '@b2 {"cmd": "chat-script", "reply": "hi"}',
                                 "@c3 no-such-command", "@d4 chat-transcripts"])
        self.assertEqual([r.get("controlId") for r in replies], ["a1", "b2", "c3", "d4"])
        self.assertTrue(replies[0]["ok"] and replies[0]["listening"])
        self.assertEqual(replies[1]["script"]["reply"], "hi")
        self.assertFalse(replies[2]["ok"])
        self.assertIn("no-such-command", replies[2]["error"])
        self.assertEqual(replies[3]["transcripts"], [])

    def test_an_untagged_command_is_answered_as_before(self):
        reply = self.exchange(["status"])[0]
        self.assertTrue(reply["ok"])
        self.assertNotIn("controlId", reply)


class ControlBugTests(unittest.TestCase):
    """A bug in a command's handler is answered as an error that names it (and logged), never a closed connection
    that the caller can only read as an empty reply."""

    def test_an_unexpected_exception_is_answered_and_logged(self):
        class Broken(ControlServer):
            async def cmd_boom(self, args):
                raise RuntimeError("dictionary changed size during iteration")

        log = io.StringIO()
        with contextlib.redirect_stderr(log):
            reply, after = asyncio.run(Broken(gateway=None, host="127.0.0.1").execute("boom"))
        self.assertIsNone(after)
        self.assertFalse(reply["ok"])
        self.assertIn("internal error in 'boom': RuntimeError: dictionary changed size", reply["error"])
        self.assertIn("Traceback", log.getvalue())


if __name__ == "__main__":
    unittest.main()
