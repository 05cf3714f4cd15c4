"""Self-test of the hostile-setup switches: a refused upgrade with a chosen status line, a
certificate rotated while running, a chosen pairing request id, and a frame of many JSON values.

Run: python3 -m unittest discover -s tools/reference-gateway -t tools/reference-gateway
"""

import asyncio
import hashlib
import json
import socket
import ssl
import unittest

from refgw_harness import GatewayProcess, GatewayTestCase, error_code
from minimal_client import Client, Identity, handshake


def upgrade_status_line(port):
    """The first line the Gateway answers a WebSocket upgrade request with, as raw bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.split(b"\r\n", 1)[0]


def served_fingerprint(port):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw) as tls_sock:
            return hashlib.sha256(tls_sock.getpeercert(binary_form=True)).hexdigest()


class HostileSetupTests(GatewayTestCase):

    async def test_upgrade_status_answers_with_the_chosen_status_line_then_normal_again(self):
        gw = GatewayProcess("--auto-approve")
        try:
            reply = gw.control({"cmd": "upgrade-status", "status": 404, "reason": "Nope\x1b[31m"})
            self.assertTrue(reply["ok"], reply)
            line = await asyncio.to_thread(upgrade_status_line, gw.info["port"])
            self.assertEqual(line, b"HTTP/1.1 404 Nope\x1b[31m")
            gw.control({"cmd": "upgrade-status", "status": 0})
            client, res = await self.handshake(gw.url, Identity())
            self.assertTrue(res["ok"], res)
        finally:
            await self.stop(gw)

    async def test_rotate_cert_serves_a_new_certificate_to_new_connections(self):
        gw = GatewayProcess("--tls", "--auto-approve")
        try:
            old = gw.info["tlsFingerprint"]
            self.assertEqual(await asyncio.to_thread(served_fingerprint, gw.info["port"]), old)
            reply = gw.control("rotate-cert")
            self.assertTrue(reply["ok"], reply)
            self.assertNotEqual(reply["tlsFingerprint"], old)
            self.assertEqual(await asyncio.to_thread(served_fingerprint, gw.info["port"]),
                             reply["tlsFingerprint"])
            self.assertEqual(gw.control("status")["ok"], True)
        finally:
            await self.stop(gw)

    async def test_pairing_request_id_is_used_verbatim(self):
        gw = GatewayProcess("--token", "t", "--remote")
        try:
            hostile = "id\x1b]0;owned\x07; rm -rf ~"
            self.assertTrue(gw.control({"cmd": "pairing-request-id", "requestId": hostile})["ok"])
            _, res = await self.handshake(gw.url, Identity(), auth={"token": "t"},
                                          scopes=["operator.read"])
            self.assertEqual(error_code(res), "PAIRING_REQUIRED")
            self.assertEqual(res["error"]["details"]["requestId"], hostile)
        finally:
            await self.stop(gw)

    async def test_send_raw_values_shape_is_one_frame_of_many_values(self):
        gw = GatewayProcess("--auto-approve")
        try:
            client, res = await self.handshake(gw.url, Identity())
            self.assertTrue(res["ok"], res)
            reply = gw.control({"cmd": "send-raw", "size": 4096, "shape": "values"})
            self.assertEqual(reply["sent"], 1)
            while True:
                frame = await client.recv()
                if frame.get("event") == "refgw.filler":
                    break
            self.assertGreater(len(frame["payload"]["pad"]), 1900)
            self.assertLessEqual(len(json.dumps(frame, separators=(",", ":"))), 4096)
        finally:
            await self.stop(gw)


if __name__ == "__main__":
    unittest.main()
