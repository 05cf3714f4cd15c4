#!/usr/bin/env python3
"""Independent WebSocket peer for SessionBridge tests (loopback only).

Default mode runs a `websockets` server whose behaviour is chosen by the request path:
  /echo                 echo every message (text or binary)
  /ping                 ping the client; send text "pong-ok" once the pong arrives
  /close?code=C&reason=R  close with that code and reason
  /oversized?bytes=N    send one binary message of N bytes
  /oversized-fragments?bytes=N   the same, fragmented in 16 KiB frames
--raw runs a plain asyncio server that writes hostile or hand-made frames (see RAW_SCENARIOS).
--tls serves wss:// with a self-signed certificate it generates (SAN: --cert-host and --cert-ips, default 127.0.0.1,::1).

The first stdout line is JSON: {"port": N, "fingerprint": sha256-hex-of-leaf-DER-or-null, "cert": path}.
Later lines report what the client sent that tests check, with the full request path, e.g.
"CLOSE /masked?t=abc 1002": tests sharing one peer tell their connections apart by a query tag.
The peer exits when its stdin closes, so it never outlives the test process.
"""
import argparse
import asyncio
import base64
import datetime
import hashlib
import json
import logging
import os
import ssl
import struct
import sys
import tempfile
from urllib.parse import parse_qs, urlsplit

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def report(line):
    print(line, flush=True)


def make_certificate(directory, host, ip_sans=("127.0.0.1", "::1")):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.timezone.utc)
    sans = [x509.DNSName(host)] + [x509.IPAddress(ipaddress.ip_address(a)) for a in ip_sans]
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path = os.path.join(directory, "cert.pem")
    key_path = os.path.join(directory, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    fingerprint = hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()
    return cert_path, key_path, fingerprint


# ---------------------------------------------------------------- websockets mode

async def handle_websocket(ws):
    url = urlsplit(ws.request.path)
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    path = url.path
    if path == "/echo":
        async for message in ws:
            await ws.send(message)
    elif path == "/ping":
        waiter = await ws.ping(b"are-you-there")
        await asyncio.wait_for(waiter, 5)
        await ws.send("pong-ok")
        async for _ in ws:
            pass
    elif path == "/close":
        await ws.close(int(query.get("code", "1000")), query.get("reason", ""))
    elif path == "/oversized":
        await ws.send(bytes(int(query["bytes"])))
        async for _ in ws:
            pass
    elif path == "/oversized-fragments":
        total = int(query["bytes"])
        chunks = (bytes(min(16384, total - i)) for i in range(0, total, 16384))
        try:
            await ws.send(chunks)
        except Exception:
            pass


async def serve_websockets(host, tls_context):
    from websockets.asyncio.server import serve

    async def handler(ws):
        try:
            await handle_websocket(ws)
        finally:
            await ws.wait_closed()
            report(f"CLOSE {ws.request.path} {ws.close_code}")

    return await serve(handler, host, 0, ssl=tls_context, max_size=None, ping_interval=None)


# ---------------------------------------------------------------- raw mode

def frame(opcode, payload=b"", fin=True, mask=None, declared=None):
    first = (0x80 if fin else 0) | opcode
    length = len(payload) if declared is None else declared
    mask_bit = 0x80 if mask else 0
    if length < 126:
        head = struct.pack("!BB", first, mask_bit | length)
    elif length < 65536:
        head = struct.pack("!BBH", first, mask_bit | 126, length)
    else:
        head = struct.pack("!BBQ", first, mask_bit | 127, length)
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        head += mask
    return head + payload


async def read_client_frame(reader):
    b1, b2 = await reader.readexactly(2)
    length = b2 & 0x7F
    if length == 126:
        length = struct.unpack("!H", await reader.readexactly(2))[0]
    elif length == 127:
        length = struct.unpack("!Q", await reader.readexactly(8))[0]
    mask = await reader.readexactly(4) if b2 & 0x80 else b"\0\0\0\0"
    data = bytes(b ^ mask[i % 4] for i, b in enumerate(await reader.readexactly(length)))
    return b1 & 0x0F, bool(b2 & 0x80), data


async def report_client_close(reader, path):
    """Reads client frames until its close frame; reports the code (or what went wrong)."""
    try:
        while True:
            opcode, masked, data = await asyncio.wait_for(read_client_frame(reader), 5)
            if not masked:
                report(f"UNMASKED {path}")
            if opcode == 0x8:
                code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else 1005
                report(f"CLOSE {path} {code}")
                return opcode, data
            if opcode == 0xA:
                report(f"PONG {path} {data.decode(errors='replace')}")
            if opcode in (0x1, 0x2):
                report(f"MESSAGE {path} {len(data)}")
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.TimeoutError) as error:
        report(f"CLOSE {path} none ({type(error).__name__})")
    return None, None


async def raw_scenario(full_path, reader, writer):
    w = writer.write
    path = urlsplit(full_path).path
    if path == "/fragmented":
        w(frame(0x1, b"Hel", fin=False))
        w(frame(0x9, b"mid-ping"))
        w(frame(0x0, b"lo ", fin=False))
        w(frame(0xA, b"unsolicited"))
        w(frame(0x0, "wörld".encode(), fin=True))
        await writer.drain()
        # The client must have answered the ping in between.
        opcode, masked, data = await asyncio.wait_for(read_client_frame(reader), 5)
        w(frame(0x1, f"got {opcode:#x} {data.decode()} masked={masked}".encode()))
        await writer.drain()
        await report_client_close(reader, full_path)
        return
    if path == "/masked":
        w(frame(0x1, b"hello", mask=b"\x01\x02\x03\x04"))
    elif path == "/garbage":
        w(bytes([0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x13, 0x37]))
    elif path == "/reserved-opcode":
        w(frame(0x3, b"??"))
    elif path == "/control-too-long":
        w(frame(0x9, bytes(126)))
    elif path == "/fragmented-control":
        w(frame(0x9, b"ping", fin=False))
    elif path == "/invalid-utf8":
        w(frame(0x1, b"ok \xff\xfe bad"))
    elif path == "/unexpected-continuation":
        w(frame(0x0, b"orphan"))
    elif path == "/huge-declared":
        # Declares 16 MiB and then really sends it, as fast as the client lets it.
        w(frame(0x2, b"", declared=16 * 1024 * 1024))
        try:
            for _ in range(16 * 16):
                w(bytes(65536))
                await writer.drain()
        except (ConnectionError, OSError):
            pass
    elif path == "/truncated":
        w(frame(0x1, b"", declared=100) + b"only ten b")
        await writer.drain()
        writer.close()
        return
    elif path == "/drop":
        writer.close()
        return
    elif path == "/close-invalid-code":
        w(frame(0x8, struct.pack("!H", 1005)))
    await writer.drain()
    await report_client_close(reader, full_path)


async def handle_raw(reader, writer):
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        lines = head.decode().split("\r\n")
        full_path = lines[0].split(" ")[1]
        path = urlsplit(full_path).path
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        key = headers.get("sec-websocket-key", "")
        accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        if path == "/status-403":
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        elif path == "/bad-accept":
            writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         b"Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n")
        elif path == "/two-accepts":
            writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Accept: {accept}\r\n\r\n").encode())
        elif path == "/silent":
            await asyncio.sleep(30)
        else:
            writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode())
            await writer.drain()
            report(f"HEADERS {full_path} {json.dumps(headers, sort_keys=True)}")
            await raw_scenario(full_path, reader, writer)
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError, OSError):
        pass
    finally:
        writer.close()


# ---------------------------------------------------------------- main

async def exit_when_stdin_closes():
    loop = asyncio.get_running_loop()
    def drain():
        while sys.stdin.buffer.read1(4096):
            pass
    await loop.run_in_executor(None, drain)
    os._exit(0)


async def main():
    # Handler tracebacks for connections a test kills on purpose are noise in the test log.
    logging.getLogger("websockets").setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser()
    parser.add_argument("--raw", action="store_true")
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--cert-host", default="localhost")
    parser.add_argument("--cert-ips", default="127.0.0.1,::1", help="comma-separated IP SANs ('' for none)")
    parser.add_argument("--host", default="127.0.0.1", choices=["127.0.0.1", "::1"])
    args = parser.parse_args()

    tls_context, cert_path, fingerprint = None, None, None
    if args.tls:
        directory = tempfile.mkdtemp(prefix="ws-peer-")
        cert_path, key_path, fingerprint = make_certificate(directory, args.cert_host,
                                                           [a for a in args.cert_ips.split(",") if a])
        tls_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls_context.load_cert_chain(cert_path, key_path)

    if args.raw:
        server = await asyncio.start_server(handle_raw, args.host, 0, ssl=tls_context)
    else:
        server = await serve_websockets(args.host, tls_context)
    port = server.sockets[0].getsockname()[1]
    report(json.dumps({"port": port, "fingerprint": fingerprint, "cert": cert_path}))
    await exit_when_stdin_closes()


if __name__ == "__main__":
    asyncio.run(main())
