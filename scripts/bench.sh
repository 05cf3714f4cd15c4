#!/usr/bin/env bash
# `make bench`: every benchmark, as JSON in out/ (and a short summary on stdout). Run under scripts/with-pulse.sh
# so the audio figures have a sound server even on a machine without a sound card.
set -euo pipefail
bin=${1:-.build/release/openclaw-talk}
mkdir -p out

echo "== bench audio -> out/bench-audio.json"
"$bin" bench audio --json >out/bench-audio.json
python3 - <<'PY'
import json
r = json.load(open("out/bench-audio.json"))
o = r["opus"]
print(f"  opus encode {o['encodeMicrosecondsMedian']:.0f} µs/frame, decode {o['decodeMicrosecondsMedian']:.0f} µs/frame, {o['bytesPerSecond']:.0f} B/s")
p = r.get("pulse")
if p:
    start = p["playbackStartLatencyMs"]
    start = f"{start['median']:.1f} ms" if start else f"not measured ({p.get('playbackStartUnmeasured')})"
    print(f"  capture latency p50 {p['captureLatencyP50Ms']:.1f} ms p95 {p['captureLatencyP95Ms']:.1f} ms, idle CPU {p['idleCaptureCPUPercent']:.2f} %,"
          f" playback start {start}, stop {p['playbackStopLatencyMs']['median']:.1f} ms")
else:
    print("  PulseAudio not measured:", r.get("pulseUnavailable"))
PY

echo "== bench aec -> out/bench-aec.json"
"$bin" bench aec --json >out/bench-aec.json
python3 - <<'PY'
import json
r = json.load(open("out/bench-aec.json"))
synthetic = ", ".join(f"{s['delayMs']} ms {s['erleDb']:.1f} dB" for s in r["synthetic"])
print(f"  ERLE synthetic {synthetic}; double talk kept at {r['doubleTalkCorrelation']:.2f};"
      f" {r['microsecondsPerFrameMedian']:.0f} µs per 20 ms frame ({r['coreSharePercent']:.2f} % of a core)")
l = r.get("loopback")
print(f"  ERLE live loopback {l['sink']} -> {l['source']}: {l['erleDb']:.1f} dB" if l else f"  live loopback not measured: {r.get('loopbackUnavailable')}")
PY

manifest=../shared/corpus/speech/manifest.tsv
if [ ! -f "$manifest" ]; then
    # Without the shared corpus, Debian's test clips (cards, with their transcriptions) make a small manifest.
    manifest=out/testdata-manifest.tsv
    printf 'file\ttranscript\n' >"$manifest"
    data=/usr/share/pocketsphinx/test/data/cards
    paste <(sed 's|^|'"$data"'/|; s|$|.wav|' "$data/cards.fileids") \
          <(sed 's/ *(.*)$//' "$data/cards.transcription") >>"$manifest"
    echo "(../shared not found: speech benchmark on pocketsphinx-testdata cards instead of the dev corpus)"
fi
echo "== bench speech $manifest --baseline -> out/bench-speech.json"
"$bin" bench speech "$manifest" --json --baseline >out/bench-speech.json
echo "== bench speech --grammar models/grammars/talk-commands.gram -> out/bench-speech-grammar.json"
"$bin" bench speech "$manifest" --json --grammar models/grammars/talk-commands.gram >out/bench-speech-grammar.json
python3 - <<'PY'
import json
for name in ("bench-speech", "bench-speech-grammar"):
    r = json.load(open(f"out/{name}.json"))
    b = r.get("baseline") or {}
    base = f", baseline WER {b['wer']*100:.1f} %" if b else ""
    print(f"  {name}: WER {r['wer']*100:.1f} %{base}, rtf {r['rtf']:.3f}, finalize p95 {r['finalize_ms']['p95']:.1f} ms,"
          f" peak RSS {r['peak_rss_mb']:.0f} MB")
PY

echo "== bench talk --manifest $manifest -> out/bench-talk.json"
"$bin" bench talk --manifest "$manifest" --json >out/bench-talk.json
python3 - <<'PY'
import json
r = json.load(open("out/bench-talk.json"))
def p(name):
    v = r[name]
    return f"p50 {v['p50']} ms p95 {v['p95']} ms"
t = r["targets"]
print(f"  {r['clips']} clips, silence window {r['silenceMs']} ms: speech end -> transcript sent {p('speechEndToTranscriptSentMs')};"
      f" -> first reply audio {p('speechEndToFirstReplyAudioMs')} (agent {p('agentMs')}; target p95 {t['firstReplyAudioP95Ms']:.0f} ms)")
print(f"  barge-in -> playback silent {p('bargeInToSilentMs')} (target p95 {t['bargeInP95Ms']:.0f} ms), {r['bargeIns']} barge-ins")
l = r.get("live")
if l:
    c = l["cpuPercent"]
    print(f"  ERLE of the reply's voice {l['erleDb']} dB (target {t['erleDb']:.0f}); CPU idle {c['idle']['p50']} %, speaking {c['speaking']['p50']} %")
    for mode, e in sorted(l["selfEcho"].items(), reverse=True):
        print(f"  self-echo --aec {mode}: cut itself off in {e['selfInterruptions']} of {e['trials']}, echo sent as a turn in {e['echoTurns']}")
else:
    print("  live half not measured:", r.get("liveUnavailable"))
PY

echo "== bench gateway -> out/bench-gateway.json"
"$bin" bench gateway --json >out/bench-gateway.json
python3 - <<'PY'
import json
r = json.load(open("out/bench-gateway.json"))
c = r["connectToHelloOkMs"]
print(f"  connect to hello-ok: ws {c['ws']['median']} ms, wss {c['wss']['median']} ms (median);"
      f" reconnect {r['reconnectAfterRestartMs']['afterGatewayBack']['median']} ms after the Gateway is back;"
      f" {r['memoryPerConnectionKiB']['ws']} KiB per connection")
cs = r["chatSendMs"]
print(f"  chat.send to ack p50 {cs['toAck']['p50']} ms p95 {cs['toAck']['p95']} ms;"
      f" to first delta p50 {cs['toFirstDelta']['p50']} ms p95 {cs['toFirstDelta']['p95']} ms")
s = r.get("talkSpeakDecode") or {}
print("  talk.speak decode per second of audio: " + ", ".join(
    f"{k} {v['decodeMsPerAudioSecond']['median']} ms" for k, v in s.items()))
PY

echo "== bench synth -> out/bench-synth.json"
"$bin" bench synth --json >out/bench-synth.json
python3 - <<'PY'
import json
r = json.load(open("out/bench-synth.json"))
f, v = r["firstAudioMs"], r["firstVoicedAudioMs"]
print(f"  first audio after a sentence arrives: p50 {f['p50']:.1f} ms p95 {f['p95']:.1f} ms (speech p95 {v['p95']:.1f} ms,"
      f" target {r['targetFirstAudioMs']:.0f} ms), engine start {r['coldFirstAudioMs']:.1f} ms, rtf {r['rtf']:.4f} (wall {r['wallRtf']:.4f})")
PY

echo "== bench uplink $manifest -> out/bench-uplink.json"
"$bin" bench uplink "$manifest" --json >out/bench-uplink.json
python3 - <<'PY'
import json
r = json.load(open("out/bench-uplink.json"))
for name in ("opus 16 kHz", "pcm16 24 kHz", "g711_ulaw 8 kHz"):
    u = r[name]
    l = u.get("speechEndToFinalMs")
    tail = f"; end of speech to relay final median {l['median']:.0f} ms ({l['recognised']}/{l['clips']} recognised)" if l else ""
    print(f"  {name}: {u['wireBytesPerSecond']:.0f} B/s on the wire ({u['ratioToPcm16']:.3f} of PCM16),"
          f" {u['cpuCoreShare'] * 100:.2f} % of a core{tail}")
PY
