#!/usr/bin/env bash
# One `swift test` pass of `make test` (arguments go to `swift test --skip-build`): under a private
# PulseAudio (WITH_SOUND_SERVER=with-pipewire.sh: PipeWire; `none`: no sound server, for this script's own
# tests), with a hard time limit so a hung test fails the run instead of stalling CI. The runner's output shows
# as it comes; a closing line then counts what Swift Testing passed, failed and skipped (its own summary leaves
# skips out), and lists by name every test that passed only with a known issue (never counted as passes) and
# every test that failed or did not end. The count, and at the time limit the tests still running, come from Swift
# Testing's event stream, not from the console, where the result lines interleave with what the tests print and
# some were lost (scripts/swift-test-tally.jq); the count is checked against Swift Testing's own summary of the run.
# The exit status is the pass's own, or 1 where the pass exited 0 but a test failed or did not end, an issue was
# recorded outside any test, or the tally and the summary disagree (or there is no summary).
# Nothing is run again: a test that fails only under load is a test that waits for time instead of an event, or a
# product fault that shows under load, and both fail the build.
#
# The pass runs in a session of its own, its processes marked by a variable in their environment. At the time
# limit this says which tests were still running, prints the stacks of the test process (lldb or gdb, if here),
# then ends everything the pass started (the test process runs in a process group of its own, its reference
# Gateways, sound and D-Bus servers in theirs): SIGTERM, then SIGKILL. `timeout` alone killed `swift test` and
# left the hung test process and its servers running after the pass had failed.
set -uo pipefail
limit=${TEST_TIME_LIMIT:-900}
# How long the stacks of a hung test process may take (attaching loads the test binary's debug information),
# and how long the pass's processes have between SIGTERM and SIGKILL.
stack_limit=${TEST_STACK_LIMIT:-180}
term_grace=10
log=$(mktemp /tmp/openclaw-talk-test-pass.XXXXXX)
events=$(mktemp /tmp/openclaw-talk-test-events.XXXXXX)
mark="OPENCLAW_TALK_TEST_PASS=$$-$RANDOM$RANDOM"
pass_pid=
tail_pid=
trap 'rm -f "$log" "$events"' EXIT

# Every live process of the pass: in its session, or carrying its mark (a daemon that left the session keeps
# its environment), or below its first process. Not this script or its `tail`. With `tests`, only the test side:
# the `swift` command below the sound-server wrapper, what it started, and what left the tree; not the wrapper and
# its server, which the wrapper stops itself once the tests have ended.
pass_processes() {
    local marked
    marked=$(grep -lzx -- "$mark" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | paste -sd' ')
    ps -e -o pid=,ppid=,sid=,stat=,comm= | awk -v root="$pass_pid" -v marked="$marked" -v me="$$" \
        -v tail="${tail_pid:-0}" -v only="${1:-all}" '
        $4 ~ /^Z/ { next }
        { parent[$1] = $2; live[$1] = 1; comm[$1] = $5; if ($3 == root) found[$1] = 1 }
        END {
            split(marked, m, " "); for (i in m) if (m[i] in live) found[m[i]] = 1
            for (pid in live) for (p = pid; p in parent && p > 1; p = parent[p]) if (p == root) { found[pid] = 1; break }
            for (pid in found) {
                if (pid == me || pid == tail) continue
                if (only == "tests") {
                    if (pid == root) continue
                    top = ""
                    for (p = pid; p in parent && p > 1; p = parent[p]) if (parent[p] == root) { top = p; break }
                    if (top != "" && comm[top] !~ /^swift/) continue
                }
                print pid
            }
        }' | sort -n
}

describe() { ps -o pid=,pgid=,sid=,etime=,args= -p "$(paste -sd, <<<"$1")" | cut -c1-240; }

# Tests that started and did not end, from Swift Testing's event stream as far as the test process wrote it (it
# writes and flushes a record for every start and end as it happens; a line it was still writing is left out), each
# with where it is declared and, parameterized, the arguments of the cases still running. Not from the console:
# there the result lines interleave with what the tests print and some were lost, so a test that had ended was
# named as running and one whose start line was lost was not named at all.
still_running() {
    jq -nR -f "$(dirname "$0")/swift-test-tally.jq" "$events" | jq -r '.running[] | "  \(.name) (\(.at))"
        + (if .caseCount > 0 then " (parameterized: \(.cases | length) of \(.caseCount) cases running"
            + (if (.cases | length) > 0 then ": " + (.cases | map(.[0:200]) | join("; ")) else "" end) + ")" else "" end)'
}

# The stacks of every thread of each test process, bounded: a debugger that hangs too must not hold the pass.
# gdb first (this toolchain's lldb needs a libpython Debian 12 does not have), its Swift names demangled.
print_stacks() {
    local pid swift_dir rc
    swift_dir=$(dirname "$(readlink -f "$(command -v "${SWIFT:-swift}")")")
    for pid in "$@"; do
        echo "Swift tests: stacks of the test process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)):"
        if command -v gdb >/dev/null; then
            timeout -k 5 "$stack_limit" gdb -nx -batch -p "$pid" -ex 'set pagination off' -ex 'set complaints 0' -ex 'thread apply all bt' \
                </dev/null 2>&1 | grep -av -e '^\[New LWP' -e '^warning: ' -e '^During symbol reading' | "$swift_dir/swift-demangle" --simplified
            rc=${PIPESTATUS[0]}
        elif "$swift_dir/lldb" --version >/dev/null 2>&1; then
            timeout -k 5 "$stack_limit" "$swift_dir/lldb" --batch -p "$pid" -o 'thread backtrace all' -o 'process detach' </dev/null 2>&1
            rc=$?
        else
            echo "(no debugger here: no stacks)"
            continue
        fi
        [ "$rc" -eq 124 ] && echo "Swift tests: the debugger took over $stack_limit s (TEST_STACK_LIMIT) and was stopped"
    done
}

# SIGTERM to the processes of the pass (`tests`: the test side; `all`), SIGKILL to what is left after the grace
# time; says what survives.
signal_pass() {
    local which=$1 pids left
    pids=$(pass_processes "$which")
    [ -z "$pids" ] && return 0
    describe "$pids"
    kill -TERM $pids 2>/dev/null
    SECONDS=0
    while [ "$SECONDS" -lt "$term_grace" ] && [ -n "$(pass_processes "$which")" ]; do sleep 0.2; done
    left=$(pass_processes "$which")
    if [ -n "$left" ]; then
        echo "Swift tests: still running $term_grace s after SIGTERM, killed:"
        describe "$left"
        kill -KILL $left 2>/dev/null
        sleep 1
    fi
}

# The tests first; the wrapper then stops its sound server and exits as it does after any run; then anything left.
stop_pass() {
    local left
    [ -z "$(pass_processes all)" ] && return 0
    echo "Swift tests: stopping the pass's processes:"
    signal_pass tests
    SECONDS=0
    while [ "$SECONDS" -lt "$term_grace" ] && kill -0 "$pass_pid" 2>/dev/null; do sleep 0.2; done
    signal_pass all
    left=$(pass_processes all)
    if [ -n "$left" ]; then
        echo "Swift tests: these processes of the pass survived SIGKILL:"
        describe "$left"
        return 1
    fi
}

# Interrupted (make stopped, CI cancelled): the pass's processes go too.
trap 'trap - INT TERM; [ -n "$pass_pid" ] && stop_pass; exit 130' INT TERM

command -v jq >/dev/null || { echo "Swift tests: jq is missing (Debian package jq: scripts/install-deps.sh)" >&2; exit 1; }
server=${WITH_SOUND_SERVER:-with-pulse.sh}
wrapper=("$(dirname "$0")/$server")
[ "$server" = none ] && wrapper=()
env "$mark" setsid "${wrapper[@]}" "${SWIFT:-swift}" test --skip-build --event-stream-output-path "$events" --event-stream-version 0 "$@" \
    >"$log" 2>&1 </dev/null &
pass_pid=$!   # not a process group leader, so setsid makes it one of a new session without forking: the session id
tail -n +1 -f --pid="$pass_pid" "$log" &
tail_pid=$!

SECONDS=0
timed_out=false
while kill -0 "$pass_pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$limit" ]; then timed_out=true; break; fi
    sleep 1
done

if $timed_out; then
    sleep 1   # what the tests printed last reaches the screen before the lines below
    echo
    echo "Swift tests: the time limit of $limit s (TEST_TIME_LIMIT) is reached; tests started and not ended:"
    if running=$(still_running); then
        echo "${running:-  (none: the test process hangs outside any test)}"
    else
        echo "  (unknown: Swift Testing's event stream could not be read)"
    fi
    testers=$(for pid in $(pass_processes); do
        tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | head -1 | grep -q '\.xctest$' && echo "$pid"; done)
    [ -n "$testers" ] && print_stacks $testers
    stop_pass
    wait "$tail_pid" 2>/dev/null
    wait "$pass_pid" 2>/dev/null
    status=124
else
    wait "$pass_pid"
    status=$?
    wait "$tail_pid" 2>/dev/null
    # A pass that ended leaves nothing behind: what a test left running would hold the next pass's ports and servers.
    leftover=$(pass_processes)
    [ -n "$leftover" ] && echo "Swift tests: processes were left running after the pass:" && stop_pass
fi

# The tally from the event stream, and Swift Testing's own summary beside it.
if ! tally=$(jq -nR -f "$(dirname "$0")/swift-test-tally.jq" "$events") || [ -z "$tally" ]; then
    echo "Swift tests: Swift Testing's event stream could not be read; the pass fails"
    exit "$([ "$status" -eq 0 ] && echo 1 || echo "$status")"
fi
field() { jq -r "$1" <<<"$tally"; }
listed() { field "$1 | if length > 0 then \": \" + join(\", \") else \"\" end"; }
echo
echo "Swift tests: $(field .passed) passed, $(field .failed) failed, $(field .skipped) skipped, $(field '.known | length') passed only with a known issue$(listed .known) (swift test $*)"
[ "$(field .failed)" -gt 0 ] && echo "Swift tests: failed$(listed .failedNames)"
[ "$(field '.notEnded | length')" -gt 0 ] && echo "Swift tests: $(field '.notEnded | length') not ended$(listed .notEnded)"
[ "$(field .outsideIssues)" -gt 0 ] && echo "Swift tests: $(field .outsideIssues) issue(s) recorded outside any test"
summary=$(field '.summary // "none (the run did not end)"')
[ "$(field .agrees)" = true ] ||
    echo "Swift tests: the tally ($(field .tests) tests, $(field .failingIssues) failing issues) disagrees with Swift Testing's summary: $summary"
[ "$status" -eq 124 ] && echo "Swift tests: stopped by the time limit of $limit s (TEST_TIME_LIMIT); the tests still running then are listed above"
if [ "$status" -eq 0 ] && { [ "$(field .agrees)" != true ] || [ "$(field '.failed + (.notEnded | length) + .outsideIssues')" -gt 0 ]; }; then
    echo "Swift tests: the pass exited 0, but fails here"
    status=1
fi
exit "$status"
