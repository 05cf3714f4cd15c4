#!/usr/bin/env bash
# The demo on the embedded default: a recorded clip stands in for the microphone and the output goes to a
# WAV file when no real sound device is configured.
set -euo pipefail
bin=${1:-.build/release/openclaw-talk}
mkdir -p out
clip=/usr/share/pocketsphinx/test/data/cards/001.wav
"$bin" play "$clip" --output out/demo-played.wav
