#!/usr/bin/env bash
# One `swift test` pass of `make test` (arguments go to `swift test --skip-build`): under a private
# PulseAudio (WITH_SOUND_SERVER=with-pipewire.sh: PipeWire), with a hard time limit so a hung test fails
# the run instead of stalling CI. The runner's output shows as it comes; a closing line then counts what
# Swift Testing passed, failed and skipped (its own summary leaves skips out). The exit status is the pass's own.
set -uo pipefail
limit=${TEST_TIME_LIMIT:-900}
log=$(mktemp /tmp/openclaw-talk-test-pass.XXXXXX)
trap 'rm -f "$log"' EXIT

"$(dirname "$0")/${WITH_SOUND_SERVER:-with-pulse.sh}" timeout "$limit" "${SWIFT:-swift}" test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# Swift Testing's result lines: `✔ Test "…" passed after …`, `✘ Test "…" failed after …`, and for a skip
# `➜ Test "…" skipped: "reason"` (a trait) or `➜ Test "…" was cancelled after …: "reason"` (mid-test).
# The run's own closing line (`✔ Test run with N tests …`) is left out.
count() { grep -E "$1" "$log" | grep -cv '^. Test run with '; }
passed=$(count '^(✔|━) Test .* passed after ')  # ━: passed with a known issue (withKnownIssue)
failed=$(count '^✘ Test .* failed after ')
skipped=$(count '^➜ Test .* (skipped|was cancelled)')
echo "Swift tests: $passed passed, $failed failed, $skipped skipped (swift test $*)"
[ "$status" -eq 124 ] && echo "Swift tests: stopped by the time limit of $limit s (TEST_TIME_LIMIT)"
exit "$status"
