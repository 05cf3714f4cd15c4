#!/usr/bin/env bash
# Benchmarks; figures are printed as JSON.
set -euo pipefail
bin=${1:-.build/release/openclaw-talk}
mkdir -p out
echo "benchmarks are added by the audio, recognition and gateway work"
