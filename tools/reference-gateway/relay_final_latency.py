#!/usr/bin/env python3
"""End of speech to the transcription relay's final, as `openclaw-talk run --stt gateway` sees it.

refgw's relay ends a turn only after `--provider-silence-ms` (default 800) of silence it has *received*, as
Deepgram's endpointing and OpenAI's server VAD do; the client keeps appending the microphone after its own
endpoint until that final arrives. Each corpus clip is played as the microphone of one `run`; the figure is the
`relayMs` of its `transcriptSource` events (the endpointer's end of speech to the relay's final). The relay
answers with the clip's manifest transcript (no corpus matching, so the Gateway's own time is not counted).

Run (after `swift build`), under a sound server as the tests are:
  scripts/with-pulse.sh python3 tools/reference-gateway/relay_final_latency.py --clips 8
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from refgw_harness import GatewayProcess  # noqa: E402
from shared_dir import shared_dir  # noqa: E402

TOKEN = "relay-latency-token"


def clips(manifest, count):
    folder = os.path.dirname(manifest)
    with open(manifest, encoding="utf-8") as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle][1:]
    return [(os.path.join(folder, row[0]), row[1]) for row in rows if len(row) > 1][:count]


def seconds(path):
    with wave.open(path) as handle:
        return handle.getnframes() / handle.getframerate()


def run_clip(binary, gateway, path, home):
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home + "/config", XDG_STATE_HOME=home + "/state",
               XDG_RUNTIME_DIR=home + "/run", OPENCLAW_TALK_TOKEN=TOKEN)
    os.makedirs(home + "/run", mode=0o700, exist_ok=True)
    args = [binary, "run", "--gateway", gateway.url, "--input", path, "--output", home + "/out.wav", "--json",
            "--stt", "gateway", "--seconds", "%.1f" % (seconds(path) + 4)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=180, check=False)
    if done.returncode != 0:
        raise RuntimeError("run failed (%d): %s" % (done.returncode, done.stderr[-600:]))
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [e for e in events if e.get("event") == "transcriptSource"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=".build/debug/openclaw-talk")
    parser.add_argument("--manifest", default=str(shared_dir() / "corpus" / "speech" / "manifest.tsv"))
    parser.add_argument("--clips", type=int, default=8)
    parser.add_argument("--provider-silence-ms", type=int, default=800)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    gateway = GatewayProcess("--token", TOKEN, "--auto-approve", "--quiet")
    relay_ms, fallbacks = [], []
    try:
        for path, transcript in clips(options.manifest, options.clips):
            gateway.control({"cmd": "talk-relay", "reset": True})
            gateway.control({"cmd": "talk-relay", "texts": [transcript] * 8,
                             "silenceMs": options.provider_silence_ms})
            with tempfile.TemporaryDirectory(prefix="relay-latency-") as home:
                for source in run_clip(options.binary, gateway, path, home):
                    if source.get("engine") == "gateway-relay" and source.get("relayMs") is not None:
                        relay_ms.append(float(source["relayMs"]))
                    else:
                        fallbacks.append(source.get("fallbackReason"))
    finally:
        gateway.stop()
    ordered = sorted(relay_ms)
    figures = {"providerSilenceMs": options.provider_silence_ms, "utterances": len(relay_ms),
               "fallbacks": len(fallbacks), "fallbackReasons": sorted(set(map(str, fallbacks))),
               "medianMs": round(statistics.median(ordered), 1) if ordered else None,
               "p90Ms": round(ordered[int(0.9 * (len(ordered) - 1))], 1) if ordered else None,
               "minMs": ordered[0] if ordered else None, "maxMs": ordered[-1] if ordered else None}
    if options.json:
        print(json.dumps(figures))
    else:
        print("end of speech to the relay's final (provider needs %d ms of received silence): median %s ms, "
              "p90 %s ms, min %s, max %s over %d utterances; %d fell back to the local words %s"
              % (options.provider_silence_ms, figures["medianMs"], figures["p90Ms"], figures["minMs"],
                 figures["maxMs"], len(relay_ms), len(fallbacks), figures["fallbackReasons"] or ""))


if __name__ == "__main__":
    main()
