#!/usr/bin/env bash
# `make demo`: the main job on the embedded default. With no real Gateway or microphone configured, it runs the
# bundled reference Gateway (wss:// with a self-signed certificate) and uses a recorded clip as the microphone:
#   1. pair with the Gateway from a setup code (trust prompt answered by the pin inside the code),
#   2. recognise the clip through the same capture -> endpointer -> recogniser pipeline the microphone uses,
#   3. play the clip through the playback path into out/demo-played.wav.
# Each step is checked (CI runs the demo): it exits non-zero when a step fails, the recognised text is not
# the clip's (DEMO_EXPECT; known for the default clip), the played file is not as long as the clip, or the
# Gateway recorded a frame from us that broke the schema.
set -euo pipefail
bin=${1:-.build/release/openclaw-talk}
default_clip=/usr/share/pocketsphinx/test/data/goforward.raw
clip=${DEMO_CLIP:-$default_clip}
expected=${DEMO_EXPECT:-}
[ -z "$expected" ] && [ "$clip" = "$default_clip" ] && expected="go forward ten meters"
mkdir -p out
work=$(mktemp -d /tmp/openclaw-talk-demo.XXXXXX)
chmod 700 "$work"
gateway_pid=""
cleanup() {
    [ -n "$gateway_pid" ] && kill "$gateway_pid" 2>/dev/null && wait "$gateway_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "make demo FAILED: $*" >&2
    exit 1
}

# Demo state stays out of the user's real configuration.
export XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state"

echo "== Starting the bundled reference Gateway (wss://, loopback)"
python3 tools/reference-gateway/refgw.py --tls --auto-approve --print-setup-code --quiet \
    --state-dir "$work/gateway" >"$work/gateway.json" 2>"$work/gateway.log" &
gateway_pid=$!
for _ in $(seq 100); do [ -s "$work/gateway.json" ] && break; sleep 0.1; done
[ -s "$work/gateway.json" ] || { echo "The reference Gateway did not start:"; cat "$work/gateway.log"; exit 1; }
setup_code=$(python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["setupCode"])' <"$work/gateway.json")

echo "== openclaw-talk setup <code>   (the code carries the certificate pin)"
printf '%s\n' "$setup_code" | "$bin" setup - | tee "$work/setup.txt"
grep -q '^Connected to ' "$work/setup.txt" || fail "setup did not say it connected"

echo "== openclaw-talk transcribe $clip   (the clip stands in for the microphone)"
"$bin" transcribe "$clip" | tee "$work/transcript.txt"
# Lines are `start end text`; the text of every utterance, joined.
heard=$(awk '{ $1 = ""; $2 = ""; sub(/^ +/, ""); printf "%s%s", (NR > 1 ? " " : ""), $0 }' "$work/transcript.txt")
if [ -n "$expected" ]; then
    [ "$heard" = "$expected" ] || fail "recognised '$heard', expected '$expected'"
else
    [ -n "$heard" ] || fail "nothing was recognised in $clip"
    echo "(no DEMO_EXPECT for this clip: the text was not compared)"
fi

echo "== openclaw-talk play $clip --output out/demo-played.wav"
"$bin" play "$clip" --output out/demo-played.wav
python3 - "$clip" out/demo-played.wav <<'PY' || fail "out/demo-played.wav does not hold the clip"
import os, sys, wave
clip, played = sys.argv[1], sys.argv[2]
def seconds(path):
    if path.endswith(".raw"):
        return os.path.getsize(path) / 32000  # 16 kHz, 16-bit mono
    with wave.open(path) as w:
        return w.getnframes() / w.getframerate()
want, got = seconds(clip), seconds(played)
print("played %.2f s of a %.2f s clip" % (got, want))
sys.exit(0 if abs(got - want) < 0.1 else 1)
PY

# Every frame the client sent was checked against the schema, when the Gateway has it (../shared).
python3 - "$work/gateway.json" <<'PY' || fail "the schema check of the frames openclaw-talk sent did not pass"
import json, socket, sys
sys.path.insert(0, "tools/reference-gateway")
from shared_dir import is_ci
info = json.loads(open(sys.argv[1]).readline())
if info["schema"] is None:
    print("the Gateway runs without ../shared's schema: frames were not checked"
          + (" (CI=true requires it)" if is_ci() else ""), file=sys.stderr)
    sys.exit(1 if is_ci() else 0)
with socket.create_connection(("127.0.0.1", info["controlPort"]), timeout=10) as sock:
    handle = sock.makefile("rw")
    handle.write("violations\n")
    handle.flush()
    reply = json.loads(handle.readline())
print("schema violations in frames from openclaw-talk: %d" % reply["count"])
sys.exit(0 if reply.get("ok") and reply["count"] == 0 else 1)
PY
echo "== make demo: every step done and checked"
