#!/usr/bin/env bash
# `make demo`: the whole product on the embedded default. OpenClaw's App Review walkthrough
# (../shared/reference/ios-walkthrough.md) against the bundled reference Gateway acting as a remote one (wss:// with a
# self-signed certificate, pairing as upstream does), a private headless PulseAudio and a recorded clip as the
# speaker's voice: setup from a `limited` code with the trust prompt, the node's and the operator's pairing requests
# approved on the Gateway, the daemon in a terminal, `talk start`, the clip spoken into the virtual microphone, the
# Gateway's transcript, the spoken reply (kept in out/demo-reply.wav: there is no sound card here), pause and resume,
# the terminal closed while Talk goes on, the heartbeat, `reconnect`, `talk stop`, `stop`, a killed daemon shown as
# stale; then a second device paired from a node-only code with the Gateway's token given once by file, talking too. Each step prints what it showed and is checked: a step that fails ends the demo non-zero (CI runs it).
set -euo pipefail
bin=${1:-.build/release/openclaw-talk}
cd "$(dirname "$0")/.."
exec scripts/with-pulse.sh python3 scripts/walkthrough.py --demo "$bin"
