"""An independent minimal Gateway client for the self-test (websockets + cryptography Ed25519).

It shares no code with the Gateway on purpose: it builds the signed payload itself.
"""

import asyncio
import base64
import hashlib
import json
import ssl
import uuid

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from websockets.asyncio.client import connect


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class Identity:
    """An Ed25519 device identity."""

    def __init__(self):
        self.key = Ed25519PrivateKey.generate()
        self.public_raw = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.device_id = hashlib.sha256(self.public_raw).hexdigest()
        self.public_b64 = b64url(self.public_raw)

    def sign(self, text):
        return b64url(self.key.sign(text.encode()))


def connect_params(identity, challenge, *, role="operator", scopes=(), client_id="test",
                   mode="test", platform="Linux ", device_family="Desktop", auth=None,
                   version="v3", min_protocol=3, max_protocol=3, signed_at=None, nonce=None,
                   device_id=None, sign_token=None, public_key=None):
    """ConnectParams with a device proof; keyword overrides make a proof wrong on purpose."""
    auth = dict(auth or {})
    token = sign_token if sign_token is not None else (
        auth.get("token") or auth.get("deviceToken") or auth.get("bootstrapToken") or "")
    signed_at = challenge["ts"] if signed_at is None else signed_at
    nonce = challenge["nonce"] if nonce is None else nonce
    fields = [version, device_id or identity.device_id, client_id, mode, role, ",".join(scopes),
              str(signed_at), token, nonce]
    if version == "v3":
        fields += [platform.strip().lower(), device_family.strip().lower()]
    params = {"minProtocol": min_protocol, "maxProtocol": max_protocol,
              "client": {"id": client_id, "version": "0.0.1", "platform": platform,
                         "deviceFamily": device_family, "mode": mode,
                         "instanceId": "inst-" + identity.device_id[:8],
                         "displayName": "selftest"},
              "role": role, "scopes": list(scopes), "caps": [], "locale": "en-US",
              "device": {"id": device_id or identity.device_id,
                         "publicKey": identity.public_b64 + "=" if public_key == "padded"
                         else identity.public_b64,
                         "signature": identity.sign("|".join(fields)), "signedAt": signed_at,
                         "nonce": nonce}}
    if auth:
        params["auth"] = auth
    return params


class Client:
    """One socket: reads the challenge, sends requests, collects events."""

    def __init__(self, ws):
        self.ws = ws
        self.challenge = None

    @classmethod
    async def open(cls, url, fingerprint_ok=True):
        context = None
        if url.startswith("wss://"):
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        ws = await connect(url, ssl=context, max_size=None, compression=None, open_timeout=5)
        client = cls(ws)
        first = await client.recv()
        assert first["event"] == "connect.challenge", first
        client.challenge = first["payload"]
        return client

    async def recv(self, timeout=5):
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        return json.loads(raw)

    async def request(self, method, params, binary=False, timeout=5):
        """Sends a request and returns its response, keeping events seen meanwhile."""
        req_id = str(uuid.uuid4())
        text = json.dumps({"type": "req", "id": req_id, "method": method, "params": params})
        await self.ws.send(text.encode() if binary else text)
        return await self.response(req_id, timeout)

    async def response(self, req_id, timeout=5):
        while True:
            frame = await self.recv(timeout)
            if frame.get("type") == "res" and frame.get("id") == req_id:
                return frame

    async def wait_event(self, name, timeout=5):
        while True:
            frame = await self.recv(timeout)
            if frame.get("type") == "event" and frame.get("event") == name:
                return frame

    async def close(self):
        await self.ws.close()


async def handshake(url, identity, **kwargs):
    """(client, connect response) after a full challenge/connect exchange."""
    binary = kwargs.pop("binary", False)
    client = await Client.open(url)
    response = await client.request("connect", connect_params(identity, client.challenge, **kwargs),
                                    binary=binary)
    return client, response
