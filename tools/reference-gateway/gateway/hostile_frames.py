"""Hostile messages a Gateway could send, for fuzzing clients (control command `fuzz`).

Every message here leaves the WebSocket connection itself intact (no oversized or truncated
frames: `send-raw` does those), so thousands can go down one socket and the client must survive
each with a clear error, not a crash.
"""

import json
import random

KINDS = ("bad-json", "wrong-types", "unknown", "invalid-utf8", "binary-garbage", "deep-nesting",
         "stray-response", "huge-numbers")

_VALID = ['{"type":"event","event":"tick","payload":{"ts":1737264000000},"seq":1}',
          '{"type":"res","id":"x","ok":true,"payload":{"runId":"r","status":"started"}}',
          '{"type":"event","event":"chat","payload":{"runId":"r","sessionKey":"main","seq":0,'
          '"state":"final","message":{"role":"assistant","content":[]}}}']
_WRONG_TYPES = [
    {"type": "event", "event": 123},
    {"type": "event", "event": "tick", "payload": {"ts": "soon"}},
    {"type": "event", "event": "tick", "payload": None, "seq": -5},
    {"type": "event", "event": "shutdown", "payload": {"restartExpectedMs": "x"}},
    {"type": "event", "event": "presence", "payload": {"presence": "everyone"}},
    {"type": "event", "event": "chat", "payload": [1, 2, 3]},
    {"type": "event", "event": "chat", "payload": {"state": 7, "message": {"content": "x"}}},
    {"type": "res", "id": None, "ok": "yes"},
    {"type": "res", "id": 42, "ok": False, "error": "bad"},
    {"type": "res", "id": "x", "ok": False, "error": {"code": 5, "details": []}},
    {"type": ["event"], "event": "tick"},
    {"type": None},
    {},
]


class HostileFrames:
    """A seeded generator of hostile messages: (kind, str | bytes)."""

    def __init__(self, seed=0, kinds=KINDS):
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise ValueError("unknown fuzz kind %s (kinds: %s)" % (unknown[0], ", ".join(KINDS)))
        self.random = random.Random(seed)
        self.kinds = tuple(kinds)

    def next(self):
        kind = self.random.choice(self.kinds)
        return kind, getattr(self, "_" + kind.replace("-", "_"))()

    def _bad_json(self):
        text = self.random.choice(_VALID)
        if self.random.random() < 0.5:
            return text[:self.random.randrange(len(text))]
        alphabet = '{}[]":,0123456789abcdefnulltrue \\'
        return "".join(self.random.choice(alphabet) for _ in range(self.random.randrange(1, 200)))

    def _wrong_types(self):
        return json.dumps(self.random.choice(_WRONG_TYPES))

    def _unknown(self):
        frame = {"type": self.random.choice(["event", "push", "rpc", "hello"]),
                 "event": "x.%d" % self.random.randrange(10 ** 6),
                 "payload": {"n": self.random.random(), "list": list(range(self.random.randrange(9)))}}
        return json.dumps(frame)

    def _invalid_utf8(self):
        text = self.random.choice(_VALID).encode("utf-8")
        cut = self.random.randrange(len(text))
        return text[:cut] + self.random.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80"]) \
            + text[cut:]

    def _binary_garbage(self):
        return bytes(self.random.randrange(256) for _ in range(self.random.randrange(1, 512)))

    def _deep_nesting(self):
        depth = self.random.choice([100, 1000, 10000, 50000])
        return '{"type":"event","event":"tick","payload":' + "[" * depth + "]" * depth + "}"

    def _stray_response(self):
        return json.dumps({"type": "res", "id": "never-asked-%d" % self.random.randrange(10 ** 9),
                           "ok": self.random.random() < 0.5, "payload": {}})

    def _huge_numbers(self):
        return self.random.choice([
            '{"type":"event","event":"tick","payload":{"ts":1e400},"seq":1}',
            '{"type":"event","event":"tick","payload":{"ts":-1},"seq":99999999999999999999999}',
            '{"type":"event","event":"shutdown","payload":{"reason":"r","restartExpectedMs":1e308}}',
            '{"type":"event","event":"tick","payload":{"ts":NaN}}'])
