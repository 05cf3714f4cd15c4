"""Paired devices, their tokens and bootstrap tokens, kept in JSON files (0600) in --state-dir.

Without a state directory everything lives in memory only. In-process restarts (`restart` control
command) keep this object, so pairings survive them either way; the state directory makes them
survive a new process too.
"""

import json
import os
import secrets
import tempfile

from .codec import now_ms

DEVICES_FILE = "devices.json"
BOOTSTRAP_FILE = "bootstrap-tokens.json"


class GatewayState:
    """Owns the persistent records. Only the asyncio loop thread touches it."""

    def __init__(self, state_dir=None):
        self.state_dir = state_dir
        self.devices = {}      # deviceId -> device record with "roles": {role: token record}
        self.bootstrap = {}    # bootstrap token -> {expiresAtMs, revokedAtMs, deviceId, profile, redeemedRoles}
        if state_dir:
            os.makedirs(state_dir, mode=0o700, exist_ok=True)
            self.devices = self._load(DEVICES_FILE)
            self.bootstrap = self._load(BOOTSTRAP_FILE)

    # -- devices -------------------------------------------------------------------------------

    def device(self, device_id):
        """The paired device record, or None."""
        return self.devices.get(device_id)

    def token_record(self, device_id, role):
        """The `{token, scopes, issuedAtMs}` record of a paired device for `role`, or None."""
        device = self.devices.get(device_id)
        return (device or {}).get("roles", {}).get(role)

    def pair(self, device_id, metadata, role, scopes):
        """Records an approved role for a device, issuing its device token the first time."""
        device = self.devices.setdefault(device_id, {"deviceId": device_id, "roles": {},
                                                     "pairedAtMs": now_ms()})
        device.update({k: v for k, v in metadata.items() if v is not None})
        record = device["roles"].get(role)
        if record is None:
            record = {"token": new_device_token(), "scopes": sorted(set(scopes)),
                      "issuedAtMs": now_ms()}
            device["roles"][role] = record
        elif not set(scopes) <= set(record["scopes"]):
            # A scope upgrade widens the existing token so the device can reconnect with it.
            record["scopes"] = sorted(set(scopes) | set(record["scopes"]))
        self.save()
        return record

    def forget(self, device_id):
        """Removes a device and all its tokens; returns whether it existed."""
        existed = self.devices.pop(device_id, None) is not None
        self.save()
        return existed

    def find_device_token(self, token):
        """(deviceId, role) of the device token equal to `token`, or None."""
        for device_id, device in self.devices.items():
            for role, record in device.get("roles", {}).items():
                if secrets.compare_digest(record["token"].encode(), token.encode()):
                    return device_id, role
        return None

    # -- bootstrap tokens ----------------------------------------------------------------------

    def mint_bootstrap(self, ttl_ms, profile):
        """A new bootstrap token valid for `ttl_ms`, for the roles of `profile` (bootstrap.py)."""
        token = secrets.token_urlsafe(24)
        self.bootstrap[token] = {"expiresAtMs": now_ms() + int(ttl_ms), "revokedAtMs": None,
                                 "deviceId": None, "profile": profile, "redeemedRoles": []}
        self.save()
        return token, self.bootstrap[token]["expiresAtMs"]

    def bootstrap_record(self, token):
        """The record of a bootstrap token, or None when unknown."""
        return self.bootstrap.get(token)

    def redeem_bootstrap(self, token, role, roles):
        """Records `role` as redeemed; once every one of `roles` is, the token is revoked (connect-hello.ts)."""
        record = self.bootstrap.get(token)
        if record is None:
            return
        redeemed = set(record.get("redeemedRoles") or []) | {role}
        record["redeemedRoles"] = sorted(redeemed)
        if set(roles) <= redeemed:
            record["revokedAtMs"] = now_ms()
        self.save()

    def revoke_bootstrap(self, token):
        """Revokes a bootstrap token now (after a handoff)."""
        record = self.bootstrap.get(token)
        if record is not None:
            record["revokedAtMs"] = now_ms()
            self.save()

    # -- files ---------------------------------------------------------------------------------

    def save(self):
        """Writes both files atomically with mode 0600 (no-op without a state directory)."""
        if not self.state_dir:
            return
        self._write(DEVICES_FILE, self.devices)
        self._write(BOOTSTRAP_FILE, self.bootstrap)

    def _load(self, name):
        path = os.path.join(self.state_dir, name)
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            return data if isinstance(data, dict) else {}
        except FileNotFoundError:
            return {}

    def _write(self, name, data):
        fd, tmp = tempfile.mkstemp(dir=self.state_dir, prefix="." + name)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, sort_keys=True)
            os.replace(tmp, os.path.join(self.state_dir, name))
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def new_device_token():
    """A fresh device token (printable ASCII, well under the 256-character bound)."""
    return "dt_" + secrets.token_urlsafe(32)
