#!/usr/bin/env bash
# One `swift test` pass of `make test` (arguments go to `swift test --skip-build`): under a private
# PulseAudio (WITH_SOUND_SERVER=with-pipewire.sh: PipeWire), with a hard time limit so a hung test fails
# the run instead of stalling CI. The runner's output shows as it comes; a closing line then counts what
# Swift Testing passed, failed and skipped (its own summary leaves skips out), and lists by name every test
# that passed only with a known issue: those are never counted as passes.
# The exit status is the pass's own. Nothing is run again: a test that fails only under load is a test that
# waits for time instead of an event, or a product fault that shows under load, and both fail the build.
set -uo pipefail
limit=${TEST_TIME_LIMIT:-900}
log=$(mktemp /tmp/openclaw-talk-test-pass.XXXXXX)
trap 'rm -f "$log"' EXIT

"$(dirname "$0")/${WITH_SOUND_SERVER:-with-pulse.sh}" timeout "$limit" "${SWIFT:-swift}" test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# Swift Testing's result lines: `✔ Test "…" passed after …`, `✘ Test "…" failed after …`, for a test whose
# issues were all known `━ Test "…" passed after … with N known issue(s).` (withKnownIssue), and for a skip
# `➜ Test "…" skipped: "reason"` (a trait) or `➜ Test "…" was cancelled after …: "reason"` (mid-test).
# The run's own closing line (`✔ Test run with N tests …`) is left out. A test case's argument holding a NUL
# (a malformed-URL case) ends its `◇` line early, so the next result is glued to it: each result starts a line.
results() { sed -E 's/(✔|━|✘|➜) Test /\n&/g' "$log" | grep -E "$1" | grep -v '^. Test run with '; }
count() { results "$1" | grep -c .; }
known=$(results '^. Test .* passed after .* known issue' | sed -E 's/^. Test (.*) passed after .*/\1/' | sort -u)
passed=$(results '^(✔|━) Test .* passed after ' | grep -cv 'known issue')
failed=$(count '^✘ Test .* failed after ')
skipped=$(count '^➜ Test .* (skipped|was cancelled)')
known_count=$(printf '%s' "$known" | grep -c .)
listed=$([ "$known_count" -gt 0 ] && printf ': %s' "$(printf '%s\n' "$known" | paste -sd',' | sed 's/,/, /g')")
echo "Swift tests: $passed passed, $failed failed, $skipped skipped, $known_count passed only with a known issue$listed (swift test $*)"
[ "$status" -eq 124 ] && echo "Swift tests: stopped by the time limit of $limit s (TEST_TIME_LIMIT)"
exit "$status"
