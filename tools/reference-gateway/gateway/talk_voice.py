"""The Gateway's voices and Talk state: `talk.speak`, `tts.speak`, `talk.mode`, `voicewake.*`.

`talk.speak` synthesises the requested text with Debian tools at request time (espeak-ng, then sox,
opusenc or lame) in the format the control channel chose, so a client test can check both the
decoded length and what a recogniser hears. The control channel can also make it answer
`UNAVAILABLE`, or hand back any raw payload (hostile tests), and hide methods from hello-ok.
"""

import asyncio
import base64
import os
import shutil
import tempfile
import wave

from .codec import now_ms
from .errors import error_shape

# format name -> (outputFormat, mimeType, fileExtension); None leaves the field out. The labels are what upstream's
# providers return (upstream-gateway.md §3, talk.speak): ElevenLabs' own names; Microsoft/Azure's
# (`audio-24khz-48kbitrate-mono-mp3`, `riff-24khz-16bit-mono-pcm`, `raw-24khz-16bit-mono-pcm`), whose MIME type
# the Gateway infers from a suffix such as `-mp3` (src/gateway/server-methods/talk.ts `inferMimeType`) or leaves
# out; an older Google provider's MIME string as the outputFormat.
CLIP_FORMATS = {
    "pcm_24000": ("pcm_24000", "audio/L16", ".pcm"),
    "pcm_44100": ("pcm_44100", "audio/L16", ".pcm"),
    "opus": ("opus_48000_64", "audio/ogg", ".ogg"),
    "wav": ("wav_22050", "audio/wav", ".wav"),
    "mp3": ("mp3_44100_128", "audio/mpeg", ".mp3"),
    "azure-mp3": ("audio-24khz-48kbitrate-mono-mp3", "audio/mpeg", ".mp3"),
    "azure-riff": ("riff-24khz-16bit-mono-pcm", None, None),
    "azure-raw": ("raw-24khz-16bit-mono-pcm", None, None),
    "azure-ogg": ("ogg-24khz-16bit-mono-opus", None, None),
    "mime-mp3": ("audio/mpeg", None, None),
    "unlabelled-mp3": (None, None, None),
}
# What each labelled format is made as (the tools make these five).
MADE_AS = {"azure-mp3": "mp3", "azure-riff": "wav24", "azure-raw": "pcm_24000", "azure-ogg": "opus",
           "mime-mp3": "mp3", "unlabelled-mp3": "mp3"}
FALLBACK_REASONS = {"talk_unconfigured", "talk_provider_unsupported", "method_unavailable"}
DEFAULT_TRIGGERS = ["openclaw", "claude", "computer"]
MAX_TRIGGERS = 32
MAX_TRIGGER_UNITS = 64
TOOL_TIMEOUT_S = 60


class ClipError(Exception):
    """A clip could not be made (a tool is missing or failed)."""


class TalkVoiceState:
    """What the control channel set for the voices, and what clients asked for."""

    def __init__(self):
        self.speak_mode = {"format": "pcm_24000"}   # or {"unavailable": reason} / {"payload": x}
        self.hidden_methods = set()
        self.speak_log = []       # {method, text, format, durationMs, bytes, params}
        self.modes = []           # talk.mode params as received, with ts
        self.triggers = list(DEFAULT_TRIGGERS)


async def make_clip(text, fmt):
    """(audio bytes, duration in ms of the spoken source) for `text` in one of CLIP_FORMATS."""
    if fmt not in CLIP_FORMATS:
        raise ClipError("unknown clip format %r (one of %s)" % (fmt, ", ".join(CLIP_FORMATS)))
    made = MADE_AS.get(fmt, fmt)
    with tempfile.TemporaryDirectory(prefix="refgw-clip-") as scratch:
        source = os.path.join(scratch, "speech.wav")
        await _run("espeak-ng", "-v", "en-us", "-w", source, "--", text)
        with wave.open(source, "rb") as handle:
            duration_ms = handle.getnframes() * 1000.0 / handle.getframerate()
        out = os.path.join(scratch, "clip")
        if made.startswith("pcm_"):
            rate = made.split("_")[1]
            await _run("sox", source, "-r", rate, "-c", "1", "-b", "16", "-e", "signed-integer",
                       "-L", "-t", "raw", out)
        elif made == "opus":
            await _run("opusenc", "--quiet", source, out)
        elif made == "mp3":
            await _run("lame", "--quiet", "--resample", "44.1", "-b", "128", source, out)
        elif made == "wav24":
            out += ".wav"
            await _run("sox", source, "-r", "24000", "-c", "1", "-b", "16", out)
        else:
            out = source
        with open(out, "rb") as handle:
            return handle.read(), duration_ms


async def _run(tool, *args):
    if shutil.which(tool) is None:
        raise ClipError("%s is not installed (scripts/install-deps.sh installs it)" % tool)
    process = await asyncio.create_subprocess_exec(tool, *args, stdout=asyncio.subprocess.DEVNULL,
                                                   stderr=asyncio.subprocess.PIPE)
    try:
        _, err = await asyncio.wait_for(process.communicate(), TOOL_TIMEOUT_S)
    except asyncio.TimeoutError:
        process.kill()
        raise ClipError("%s took longer than %d s" % (tool, TOOL_TIMEOUT_S))
    if process.returncode != 0:
        raise ClipError("%s failed (%d): %s" % (tool, process.returncode,
                                                err.decode(errors="replace")[:200]))


def clean_triggers(triggers):
    """As the Gateway stores them: trimmed, empties dropped, bounded; empty means the defaults."""
    cleaned = [t.strip() for t in triggers if isinstance(t, str) and t.strip()]
    cleaned = [t for t in cleaned if len(t.encode("utf-16-le")) // 2 <= MAX_TRIGGER_UNITS]
    return cleaned[:MAX_TRIGGERS] or list(DEFAULT_TRIGGERS)


class TalkVoiceMethods:
    """Method handlers (mixed into `Methods`, which supplies `self.gateway` and raises errors)."""

    async def _talk_speak(self, conn, params):
        return await self._speak(conn, "talk.speak", params)

    async def _tts_speak(self, conn, params):
        return await self._speak(conn, "tts.speak", params)

    async def _speak(self, conn, method, params):
        from .methods import MethodError
        state = self.gateway.talk_voice
        mode = dict(state.speak_mode)
        entry = {"method": method, "text": params.get("text"), "params": dict(params),
                 "ts": now_ms()}
        state.speak_log.append(entry)
        if "unavailable" in mode:
            reason = mode["unavailable"]
            entry["answer"] = "unavailable"
            raise MethodError(error_shape(
                "UNAVAILABLE", "talk.speak unavailable: %s" % reason,
                details={"reason": reason, "fallbackEligible": reason in FALLBACK_REASONS}))
        if "payload" in mode:
            entry["answer"] = "raw"
            return mode["payload"]
        text = params.get("text")
        if not isinstance(text, str) or not text.strip():
            raise MethodError(error_shape("INVALID_REQUEST", "text required"))
        try:
            audio, duration_ms = await make_clip(text, mode["format"])
        except ClipError as failure:
            raise MethodError(error_shape("UNAVAILABLE", str(failure), details={
                "reason": "synthesis_failed", "fallbackEligible": False}))
        output_format, mime, extension = CLIP_FORMATS[mode["format"]]
        entry.update({"answer": "clip", "format": mode["format"], "durationMs": duration_ms,
                      "bytes": len(audio)})
        result = {"audioBase64": base64.b64encode(audio).decode("ascii"), "provider": "refgw"}
        for key, value in (("outputFormat", output_format), ("mimeType", mime), ("fileExtension", extension)):
            if value is not None:
                result[key] = value
        if method == "talk.speak":
            result["voiceCompatible"] = True
        return result

    async def _talk_mode(self, conn, params):
        from .methods import MethodError
        gw = self.gateway
        gw.talk_voice.modes.append({"enabled": params.get("enabled"), "phase": params.get("phase"),
                                    "connId": conn.conn_id, "ts": now_ms()})
        if not any(c.authenticated and c.role == "node" and "talk" in c.caps
                   for c in gw.connections.values()):
            raise MethodError(error_shape("UNAVAILABLE",
                                          "talk disabled: no connected Talk-capable nodes"))
        payload = {"enabled": bool(params.get("enabled")), "phase": params.get("phase"),
                   "ts": now_ms()}
        gw.spawn(gw.broadcast("talk.mode", payload, want=_reads))
        return {"ok": True}

    async def _voicewake_get(self, conn, params):
        return {"triggers": list(self.gateway.talk_voice.triggers)}

    async def _voicewake_set(self, conn, params):
        triggers = params.get("triggers")
        if not isinstance(triggers, list):
            from .methods import MethodError
            raise MethodError(error_shape("INVALID_REQUEST", "triggers must be an array"))
        return {"triggers": await set_triggers(self.gateway, triggers)}


def _reads(conn):
    from .methods import scope_satisfied
    return conn.role == "node" or (conn.role == "operator"
                                   and scope_satisfied(conn.scopes, "operator.read"))


async def set_triggers(gw, triggers):
    """Stores the wake phrases and announces them to read-scoped operators and every node."""
    gw.talk_voice.triggers = clean_triggers(triggers)
    await gw.broadcast("voicewake.changed", {"triggers": list(gw.talk_voice.triggers)},
                       want=_reads)
    return list(gw.talk_voice.triggers)


def recorded(key, entries, args):
    """A control reply listing what was recorded, emptying the record on `clear`."""
    reply = {key: list(entries)}
    if args.get("clear"):
        entries.clear()
    return reply


class TalkVoiceControl:
    """Control commands (mixed into `ControlServer`, which supplies `self.gateway`)."""

    async def cmd_talk_speak(self, args):
        """`talk-speak mp3`, `{"unavailable": "talk_unconfigured"}`, `{"payload": <anything>}`
        (`padAudioBase64: N` replaces its audioBase64 with N characters that are not base64)."""
        from .control import ControlError
        state = self.gateway.talk_voice
        if "payload" in args:
            payload = args["payload"]
            if isinstance(payload, dict) and isinstance(args.get("padAudioBase64"), int):
                # A huge string, which a control line (64 KiB at most) cannot carry itself.
                payload = dict(payload, audioBase64="!" * args["padAudioBase64"])
            state.speak_mode = {"payload": payload}
        elif "unavailable" in args:
            state.speak_mode = {"unavailable": str(args["unavailable"] or "talk_unconfigured")}
        elif args.get("format") in CLIP_FORMATS:
            state.speak_mode = {"format": args["format"]}
        else:
            raise ControlError("talk-speak takes a format (%s), unavailable or payload"
                               % ", ".join(CLIP_FORMATS))
        return {"mode": state.speak_mode if "payload" not in state.speak_mode else "payload"}

    async def cmd_speak_log(self, args):
        return recorded("speaks", self.gateway.talk_voice.speak_log, args)

    async def cmd_make_clip(self, args):
        """A clip as talk.speak would send it (for benchmarks): {format, text} -> base64 + ms."""
        from .control import ControlError
        try:
            audio, duration_ms = await make_clip(str(args.get("text") or "hello"),
                                                 str(args.get("format")))
        except ClipError as failure:
            raise ControlError(str(failure))
        output_format, mime, extension = CLIP_FORMATS[args["format"]]
        return {"audioBase64": base64.b64encode(audio).decode("ascii"), "durationMs": duration_ms,
                "outputFormat": output_format, "mimeType": mime, "fileExtension": extension}

    async def cmd_hide_method(self, args):
        """Removes a method from hello-ok `features.methods` (and answers it as unknown)."""
        self.gateway.talk_voice.hidden_methods.add(str(args.get("method", "talk.speak")))
        return {"hidden": sorted(self.gateway.talk_voice.hidden_methods)}

    async def cmd_show_method(self, args):
        self.gateway.talk_voice.hidden_methods.discard(str(args.get("method", "talk.speak")))
        return {"hidden": sorted(self.gateway.talk_voice.hidden_methods)}

    async def cmd_talk_modes(self, args):
        return recorded("modes", self.gateway.talk_voice.modes, args)

    async def cmd_voicewake_set(self, args):
        """`{"cmd": "voicewake-set", "triggers": [...]}`: as if another client had changed them."""
        from .control import ControlError
        if not isinstance(args.get("triggers"), list):
            raise ControlError("voicewake-set needs triggers: [...]")
        return {"triggers": await set_triggers(self.gateway, args["triggers"])}
