"""Presence: one entry per connected device (or instance), plus the Gateway's own entry.

Entries are keyed by device id, else `client.instanceId`, else connection id, so a device with a
node and an operator socket shows up once with both roles. Clients in mode cli/backend/probe do
not appear (fact sheet §6.3).
"""

import os
import socket

from . import VERSION
from .codec import now_ms

HIDDEN_MODES = {"cli", "backend", "probe"}


class Presence:
    """The presence table and its version counter (the `stateVersion.presence` number)."""

    def __init__(self):
        self.version = 1
        self.entries = {}      # key -> entry (PresenceEntry fields)
        self.members = {}      # key -> {connId: role}
        self.self_entry = {"host": socket.gethostname() or "refgw", "version": VERSION,
                           "platform": "linux", "mode": "gateway", "reason": "self",
                           "instanceId": "refgw-%d" % os.getpid(), "ts": now_ms()}

    def join(self, conn_id, client, role, scopes, device_id):
        """Adds a connection; returns True when the visible list changed."""
        if client.get("mode") in HIDDEN_MODES:
            return False
        key = (device_id or client.get("instanceId") or conn_id).lower()
        members = self.members.setdefault(key, {})
        members[conn_id] = role
        entry = {"ts": now_ms(), "reason": "connect", "roles": sorted(set(members.values()))}
        for field, source in (("host", "displayName"), ("version", "version"),
                              ("platform", "platform"), ("deviceFamily", "deviceFamily"),
                              ("modelIdentifier", "modelIdentifier"), ("mode", "mode"),
                              ("instanceId", "instanceId")):
            if isinstance(client.get(source), str) and client[source]:
                entry[field] = client[source]
        if device_id:
            entry["deviceId"] = device_id
        merged_scopes = set(self.entries.get(key, {}).get("scopes", [])) | set(scopes)
        if merged_scopes:
            entry["scopes"] = sorted(merged_scopes)
        self.entries[key] = entry
        self.version += 1
        return True

    def leave(self, conn_id):
        """Removes a connection; returns True when the visible list changed."""
        for key, members in list(self.members.items()):
            if conn_id in members:
                del members[conn_id]
                if members:
                    self.entries[key]["roles"] = sorted(set(members.values()))
                else:
                    del self.members[key]
                    del self.entries[key]
                self.version += 1
                return True
        return False

    def seen(self, conn_id, reason):
        """Refreshes the entry of a connection that sent a beacon; True when it is listed."""
        for key, members in self.members.items():
            if conn_id in members:
                self.entries[key]["ts"] = now_ms()
                if isinstance(reason, str) and reason:
                    self.entries[key]["reason"] = reason
                self.version += 1
                return True
        return False

    def listing(self):
        """The entries as `system-presence` and the snapshot report them."""
        return [dict(self.self_entry)] + [dict(e) for e in self.entries.values()]
