"""Control commands of the Talk relays (a mixin of ControlServer)."""

from .talk_audio import ENCODINGS, SUPPORTED_RATES
import os
import wave

from .talk_audio import pcm16_bytes
from .talk_relay import DEFAULT_SETTINGS, correlation_with
from .talk_relay_marks import MARK_STRATEGIES


def write_wav(folder, turn):
    path = os.path.join(folder, "turn-%s.wav" % turn["turnId"][:8])
    with wave.open(path, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(turn["sampleRateHz"])
        handle.writeframes(pcm16_bytes(turn["samples"]))
    return path
from .talk_relay_methods import check_era
from .talk_relay_user import USER_TRANSCRIPTS


def parse_contract(value):
    """`{"encoding", "sampleRateHz"}` from that dict or from `opus/16000`."""
    if isinstance(value, str):
        encoding, _, rate = value.partition("/")
        value = {"encoding": encoding, "sampleRateHz": int(rate or 0)}
    encoding, rate = value.get("encoding"), int(value.get("sampleRateHz", 0))
    if encoding not in ENCODINGS:
        raise ValueError("uplink encoding is one of %s" % ", ".join(ENCODINGS))
    if rate not in SUPPORTED_RATES[encoding]:
        raise ValueError("%s is offered at %s Hz" % (encoding, ", ".join(map(str, SUPPORTED_RATES[encoding]))))
    return {"encoding": encoding, "sampleRateHz": rate}


class TalkRelayControl:
    @property
    def _relay(self):
        return self.gateway.talk_relay

    async def cmd_talk_relay(self, args):
        """Sets relay settings (see talk_relay.DEFAULT_SETTINGS); `reset` restores the defaults."""
        relay = self._relay
        if args.pop("reset", False):
            relay.settings = dict(DEFAULT_SETTINGS)
            relay.settings["texts"] = []
            relay.settings["finalDelaysMs"] = []
        unknown = set(args) - set(DEFAULT_SETTINGS)
        if unknown:
            raise ValueError("talk-relay does not know %s" % ", ".join(sorted(unknown)))
        for key in ("transcriptionContract", "realtimeContract"):
            if key in args:
                args[key] = parse_contract(args[key])
        if "era" in args:
            check_era(args["era"])
        if "userTranscripts" in args and args["userTranscripts"] not in USER_TRANSCRIPTS:
            raise ValueError("userTranscripts is one of %s" % ", ".join(USER_TRANSCRIPTS))
        if "markStrategy" in args and args["markStrategy"] not in MARK_STRATEGIES:
            raise ValueError("markStrategy is one of %s" % ", ".join(MARK_STRATEGIES))
        if "texts" in args:
            args["texts"] = [str(t) for t in args["texts"]]
        if "finalDelaysMs" in args:
            args["finalDelaysMs"] = [int(d) for d in args["finalDelaysMs"]]
        relay.settings.update(args)
        return {"settings": {k: v for k, v in relay.settings.items()}}

    async def cmd_talk_uplink(self, args):
        """`talk-uplink {"transcription": "opus/16000", "realtime": "pcm16/24000"}`."""
        out = {}
        for mode in ("transcription", "realtime"):
            if mode in args:
                out[mode + "Contract"] = parse_contract(args[mode])
        self._relay.settings.update(out)
        return {"transcriptionContract": self._relay.settings["transcriptionContract"],
                "realtimeContract": self._relay.settings["realtimeContract"]}

    async def cmd_relay_expire(self, args):
        """Expires every relay session now (as its TTL would)."""
        sessions = list(self._relay.sessions.values())
        for session in sessions:
            await session.expire()
        return {"expired": [s.session_id for s in sessions]}

    async def cmd_relay_sessions(self, args):
        return {"sessions": [{"sessionId": s.session_id, "mode": s.mode, "legacy": s.legacy,
                              "connId": s.conn.conn_id, "encoding": s.encoding,
                              "sampleRateHz": s.rate, "expiresAtMs": s.expires_ms,
                              "turnOpen": s.turn is not None}
                             for s in self._relay.sessions.values()]}

    async def cmd_relay_turns(self, args):
        """Finished turns (decoded audio left out); with `reference` (a WAV path), each turn's
        loudness correlation with it; with `dump` (a folder), each turn's audio as a WAV (turns whose audio
        was released have neither)."""
        turns = []
        for turn in self._relay.turns:
            entry = {k: v for k, v in turn.items() if k != "samples"}
            if turn.get("audioReleased"):
                turns.append(entry)
                continue
            if args.get("reference"):
                entry["correlation"], entry["lagWindows"] = correlation_with(turn, args["reference"])
            if args.get("dump"):   # a folder: each turn's decoded audio as a WAV file
                entry["wav"] = write_wav(args["dump"], turn)
            turns.append(entry)
        if args.get("clear"):
            self._relay.turns.clear()
        return {"turns": turns}

    async def cmd_relay_log(self, args):
        log = list(self._relay.log)
        if args.get("clear"):
            self._relay.log.clear()
        return {"log": log, "maxInFlight": dict(self._relay.max_in_flight)}
