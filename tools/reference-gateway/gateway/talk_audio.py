"""What a relay does with the audio it receives: decode each uplink contract to PCM, and compare it.

Contracts (fact sheet §5.2, §9.1, §5.6): `pcm16` little-endian at the stated rate; `g711_ulaw` at 8 kHz;
and `opus`, which no real Gateway accepts: refgw offers it on command, as raw 20 ms Opus packets each
preceded by its length (2 bytes, big-endian), several per append, decoded through libopus (ctypes).
Comparisons use loudness envelopes (RMS per 10 ms), which survive resampling and lossy codecs but not
a wrong rate, byte order or encoding.
"""

import array
import ctypes
import ctypes.util
import math
import operator
import struct
import wave

ENCODINGS = ("pcm16", "g711_ulaw", "opus")
SUPPORTED_RATES = {"pcm16": (8000, 16000, 24000, 48000), "g711_ulaw": (8000,),
                   "opus": (8000, 12000, 16000, 24000, 48000)}
ENVELOPE_MS = 10
# A turn may hold other sound around the clip, as a recogniser's input does (the reply's echo before the user's words,
# noise after them): a clip is also looked for inside a turn longer than it, judged over the clip's span only.
# Clips under 1 s (100 windows; a digit) fit some stretch of any speech, so they match whole turns only. At most 6 s
# of other sound (600 windows) bounds the search: 25-120 ms of CPU for a turn of 2-20 s against the corpus. A clip
# inside needs a higher correlation than a whole turn (0.85, not 0.8): a few seconds of the reply's echo correlate
# with some clip's span at 0.8 at times, at 0.85 not.
CONTAINED_MIN_WINDOWS = 100
CONTAINED_EXTRA_WINDOWS = 600
CONTAINED_THRESHOLD = 0.85


class AudioError(Exception):
    """Audio that does not decode under the session's contract."""


def _ulaw_table():
    table = []
    for byte in range(256):
        value = ~byte & 0xFF
        sign, exponent, mantissa = value & 0x80, (value >> 4) & 0x07, value & 0x0F
        magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84
        table.append(-magnitude if sign else magnitude)
    return table


ULAW = _ulaw_table()


class OpusStream:
    """A libopus decoder for one session (packets carry state from one to the next)."""

    _lib = None

    def __init__(self, rate):
        lib = OpusStream._load()
        error = ctypes.c_int(0)
        self._lib = lib
        self.rate = rate
        self._handle = lib.opus_decoder_create(rate, 1, ctypes.byref(error))
        if error.value != 0 or not self._handle:
            raise AudioError("libopus cannot decode at %d Hz" % rate)
        self._pcm = (ctypes.c_int16 * (rate // 10))()

    @classmethod
    def _load(cls):
        if cls._lib is None:
            name = ctypes.util.find_library("opus") or "libopus.so.0"
            lib = ctypes.CDLL(name)
            lib.opus_decoder_create.restype = ctypes.c_void_p
            lib.opus_decoder_create.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
            lib.opus_decode.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                                        ctypes.POINTER(ctypes.c_int16), ctypes.c_int, ctypes.c_int]
            lib.opus_decoder_destroy.argtypes = [ctypes.c_void_p]
            cls._lib = lib
        return cls._lib

    def decode(self, payload):
        samples = []
        index = 0
        while index < len(payload):
            if index + 2 > len(payload):
                raise AudioError("opus payload ends inside a packet length")
            length = (payload[index] << 8) | payload[index + 1]
            index += 2
            if index + length > len(payload):
                raise AudioError("opus packet of %d bytes runs past the payload" % length)
            packet = bytes(payload[index:index + length])
            index += length
            count = self._lib.opus_decode(self._handle, packet, len(packet), self._pcm,
                                          len(self._pcm), 0)
            if count < 0:
                raise AudioError("libopus rejected a packet (error %d)" % count)
            samples.extend(self._pcm[:count])
        return samples

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.opus_decoder_destroy(self._handle)
            self._handle = None


class UplinkDecoder:
    """Decodes the appends of one session under its contract into samples at the contract rate."""

    def __init__(self, encoding, rate):
        if encoding not in ENCODINGS or rate not in SUPPORTED_RATES[encoding]:
            raise AudioError("unsupported contract %s/%s" % (encoding, rate))
        self.encoding = encoding
        self.rate = rate
        self._opus = OpusStream(rate) if encoding == "opus" else None

    def decode(self, payload):
        if self.encoding == "pcm16":
            if len(payload) % 2:
                raise AudioError("pcm16 payload of an odd length (%d bytes)" % len(payload))
            samples = array.array("h")
            samples.frombytes(bytes(payload))
            return samples.tolist()
        if self.encoding == "g711_ulaw":
            return [ULAW[b] for b in payload]
        return self._opus.decode(payload)


def envelope(samples, rate, window_ms=ENVELOPE_MS):
    """RMS per window."""
    step = max(1, rate * window_ms // 1000)
    out = []
    for start in range(0, len(samples) - step + 1, step):
        chunk = samples[start:start + step]
        out.append(math.sqrt(sum(s * s for s in chunk) / step))
    return out


def _corr(x, y):
    n = min(len(x), len(y))
    if n < 10:
        return 0.0
    x, y = x[:n], y[:n]
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else 0.0


def best_correlation(received, reference, max_lag=None, min_overlap=0.7):
    """(correlation, lag in windows) of the two envelopes at their best alignment: `received[i]` lines up
    with `reference[i + lag]`, over an overlap of at least `min_overlap` of the shorter one."""
    if not received or not reference:
        return 0.0, 0
    need = max(10, int(min(len(received), len(reference)) * min_overlap))
    low, high = -(len(received) - need), len(reference) - need
    if max_lag is not None:
        low, high = max(low, -max_lag), min(high, max_lag)
    best = (-1.0, 0)
    for lag in range(low, high + 1):
        a = received[max(0, -lag):]
        b = reference[max(0, lag):]
        value = _corr(a, b)
        if value > best[0]:
            best = (value, lag)
    return best


def contained_correlation(heard, clip, max_extra=CONTAINED_EXTRA_WINDOWS):
    """(correlation, offset) of `clip` at its best placement inside `heard` (`clip[i]` lines up with
    `heard[offset + i]`), over the clip's span only; (0.0, 0) if `heard` is shorter than the clip or longer by more
    than `max_extra` windows."""
    n = len(clip)
    extra = len(heard) - n
    if n < 10 or extra < 0 or extra > max_extra:
        return 0.0, 0
    mean = sum(clip) / n
    centred = [c - mean for c in clip]
    syy = sum(c * c for c in centred)
    if syy <= 0:
        return 0.0, 0
    sums, squares = [0.0], [0.0]
    for value in heard:
        sums.append(sums[-1] + value)
        squares.append(squares[-1] + value * value)
    best = (-1.0, 0)
    for offset in range(extra + 1):
        total = sums[offset + n] - sums[offset]
        sxx = squares[offset + n] - squares[offset] - total * total / n
        if sxx <= 0:
            continue
        # Σ (h - mean h)(c - mean c) = Σ h (c - mean c): the centred clip sums to zero.
        value = sum(map(operator.mul, heard[offset:offset + n], centred)) / math.sqrt(sxx * syy)
        if value > best[0]:
            best = (value, offset)
    return best


def read_wav(path):
    """(samples, rate) of a mono 16-bit WAV."""
    with wave.open(path, "rb") as handle:
        if handle.getsampwidth() != 2 or handle.getnchannels() != 1:
            raise AudioError("%s is not mono 16-bit PCM" % path)
        frames = handle.readframes(handle.getnframes())
        rate = handle.getframerate()
    samples = array.array("h")
    samples.frombytes(frames)
    return samples.tolist(), rate


def rms(samples):
    return math.sqrt(sum(s * s for s in samples) / len(samples)) if samples else 0.0


class ClipIndex:
    """Known clips (a corpus manifest) by loudness envelope, to return the transcript of one."""

    def __init__(self, manifest_path):
        self.manifest_path = manifest_path
        self._clips = None

    def _load(self):
        import csv
        import os
        clips = []
        folder = os.path.dirname(self.manifest_path)
        with open(self.manifest_path, encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                try:
                    samples, rate = read_wav(os.path.join(folder, row["file"]))
                except (OSError, AudioError, wave.Error):
                    continue
                clips.append((row["file"], row["transcript"], _trimmed(envelope(samples, rate))))
        self._clips = clips

    def match(self, samples, rate, threshold=0.8, contained_threshold=CONTAINED_THRESHOLD):
        """(file, transcript, correlation) of the clip the turn is (at least `threshold`), else of the clip inside
        the turn with other sound around it (at least `contained_threshold`), else None."""
        if self._clips is None:
            self._load()
        whole = envelope(samples, rate)
        heard = _trimmed(whole)
        best = None
        for name, transcript, clip in self._clips:
            if not clip or abs(len(clip) - len(heard)) > max(40, len(clip) // 3):
                continue  # a different length by more than a third cannot be this clip
            value, _ = best_correlation(heard, clip, max_lag=60)
            if best is None or value > best[2]:
                best = (name, transcript, value)
        if best and best[2] >= threshold:
            return best
        inside = None
        for name, transcript, clip in self._clips:
            if len(clip) < CONTAINED_MIN_WINDOWS:
                continue
            value, _ = contained_correlation(whole, clip)
            if inside is None or value > inside[2]:
                inside = (name, transcript, value)
        return inside if inside and inside[2] >= contained_threshold else None

    def match_start(self, samples, rate, threshold=0.8, max_lag=20):
        """(file, transcript, clip duration in ms) of the clip whose start the speech heard so far matches best
        (loudness envelopes, the heard one against as much of each clip), or None below `threshold`: what a
        streaming recogniser knows of an utterance before it ends."""
        if self._clips is None:
            self._load()
        heard = _trimmed(envelope(samples, rate))
        if len(heard) < 10:
            return None
        best = None
        for name, transcript, clip in self._clips:
            if len(clip) < len(heard) * 0.8:
                continue  # the speech heard already outlasts this clip
            value, _ = best_correlation(heard, clip[:len(heard) + max_lag], max_lag=max_lag)
            if best is None or value > best[3]:
                best = (name, transcript, len(clip) * ENVELOPE_MS, value)
        return best[:3] if best and best[3] >= threshold else None


def _trimmed(env):
    """The envelope between its first and last window above a tenth of its peak."""
    if not env:
        return env
    floor = max(env) / 10
    loud = [i for i, v in enumerate(env) if v > floor]
    return env[loud[0]:loud[-1] + 1] if loud else []


def pcm16_bytes(samples):
    return struct.pack("<%dh" % len(samples), *samples)
