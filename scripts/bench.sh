#!/usr/bin/env bash
# `make bench`: every benchmark, each printing its table and writing its JSON (with the date, machine and command
# of the run) into the report folder, where tools/bench-report/report.py draws the page (index.html) after each.
# Run under scripts/with-pulse.sh so the audio figures have a sound server even on a machine without a sound card.
set -euo pipefail
bin=${1:-.build/release/openclaw-talk}
dir=${2:-out/bench}
mkdir -p "$dir"
rm -f "$dir"/bench-*.json

step() { echo; echo "== openclaw-talk $*"; "$bin" "$@" --report "$dir"; }

step bench audio
step bench aec

shared=${OPENCLAW_TALK_SHARED:-../shared}
manifest=$shared/corpus/speech/manifest.tsv
if [ ! -f "$manifest" ]; then
    # Without the shared corpus, Debian's test clips (cards, with their transcriptions) make a small manifest.
    manifest=$dir/testdata-manifest.tsv
    printf 'file\ttranscript\n' >"$manifest"
    data=/usr/share/pocketsphinx/test/data/cards
    paste <(sed 's|^|'"$data"'/|; s|$|.wav|' "$data/cards.fileids") \
          <(sed 's/ *(.*)$//' "$data/cards.transcription") >>"$manifest"
    echo "(the shared corpus is not there: speech benchmarks on pocketsphinx-testdata cards instead)"
fi
step bench speech "$manifest" --baseline
step bench speech "$manifest" --grammar models/grammars/talk-commands.gram
step bench talk --manifest "$manifest"
step bench gateway
step bench synth
step bench uplink "$manifest"
