#!/usr/bin/env bash
# `make demo`: the main job on the embedded default. With no real Gateway or microphone configured, it runs the
# bundled reference Gateway (wss:// with a self-signed certificate) and uses a recorded clip as the microphone:
#   1. pair with the Gateway from a setup code (trust prompt answered by the pin inside the code),
#   2. recognise the clip through the same capture -> endpointer -> recogniser pipeline the microphone uses,
#   3. play the clip through the playback path into out/demo-played.wav.
set -euo pipefail
bin=${1:-.build/release/openclaw-talk}
clip=${DEMO_CLIP:-/usr/share/pocketsphinx/test/data/goforward.raw}
mkdir -p out
work=$(mktemp -d /tmp/openclaw-talk-demo.XXXXXX)
chmod 700 "$work"
gateway_pid=""
cleanup() {
    [ -n "$gateway_pid" ] && kill "$gateway_pid" 2>/dev/null && wait "$gateway_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

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
printf '%s\n' "$setup_code" | "$bin" setup -

echo "== openclaw-talk transcribe $clip   (the clip stands in for the microphone)"
"$bin" transcribe "$clip"

echo "== openclaw-talk play $clip --output out/demo-played.wav"
"$bin" play "$clip" --output out/demo-played.wav
