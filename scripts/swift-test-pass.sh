#!/usr/bin/env bash
# One `swift test` pass of `make test` (arguments go to `swift test --skip-build`): under a private
# PulseAudio (WITH_SOUND_SERVER=with-pipewire.sh: PipeWire), with a hard time limit so a hung test fails
# the run instead of stalling CI. The runner's output shows as it comes; a closing line then counts what
# Swift Testing passed, failed and skipped (its own summary leaves skips out), and lists by name every test
# that passed only with a known issue: those are never counted as passes.
# The exit status is the pass's own. Nothing is run again: a test that fails only under load is a test that
# waits for time instead of an event, or a product fault that shows under load, and both fail the build.
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
mark="OPENCLAW_TALK_TEST_PASS=$$-$RANDOM$RANDOM"
pass_pid=
tail_pid=
trap 'rm -f "$log"' EXIT

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

# Tests that started and did not end, from the log. Swift Testing's lines: `◇ Test "…" started.`, then
# `✔ Test "…" passed after …`, `✘ Test "…" failed after …`, `➜ Test "…" skipped…`/`was cancelled…`; a
# parameterized test ends with `✔ Test "…" with N test cases passed after …`, and each of its cases starts
# with `◇ Test case passing … to "…" started.` (its arguments may span lines; cases have no end line of their
# own). A result glued to an earlier line (an argument holding a NUL) starts a line of its own here, and a start
# line the limit cut short is named as far as it got.
still_running() {
    sed -E 's/(◇|✔|━|✘|➜) Test /\n&/g' "$log" | sed -nE \
        -e 's/^◇ Test "(.*)" started\.?$/S\t\1/p; t' \
        -e 's/^(✔|━|✘|➜) Test "(.*)" (with [0-9]+ test cases? )?(passed after |failed after |skipped|was cancelled).*/E\t\2/p; t' \
        -e 's/^.* to "(.*)" started\.?$/C\t\1/p; t' \
        -e '$s/^◇ Test "(.*)$/S\t\1… (its line cut off)/p' |
        awk -F'\t' '
            $1 == "S" { if (!($2 in started)) order[++n] = $2; started[$2]++ }
            $1 == "E" { ended[$2]++ }
            $1 == "C" { cases[$2]++ }
            END {
                for (i = 1; i <= n; i++) {
                    name = order[i]; left = started[name] - ended[name]
                    if (left <= 0) continue
                    line = "  \"" name "\""
                    if (left > 1) line = line " (" left " of that name)"
                    if (name in cases) line = line " (parameterized: " cases[name] " cases started)"
                    print line
                }
            }'
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

env "$mark" setsid "$(dirname "$0")/${WITH_SOUND_SERVER:-with-pulse.sh}" "${SWIFT:-swift}" test --skip-build "$@" \
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
    running=$(still_running)
    echo
    echo "Swift tests: the time limit of $limit s (TEST_TIME_LIMIT) is reached; tests started and not ended:"
    echo "${running:-  (none: the test process hangs outside any test)}"
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

# Swift Testing's result lines: `✔ Test "…" passed after …`, `✘ Test "…" failed after …`, for a test whose
# issues were all known `━ Test "…" passed after … with N known issue(s).` (withKnownIssue), and for a skip
# `➜ Test "…" skipped: "reason"` (a trait) or `➜ Test "…" was cancelled after …: "reason"` (mid-test).
# The run's own closing line (`✔ Test run with N tests …`) is left out. A test case's argument holding a NUL
# (a malformed-URL case) ends its `◇` line early, so the next result is glued to it: each result starts a line.
results() { sed -E 's/(✔|━|✘|➜) Test /\n&/g' "$log" | grep -aE "$1" | grep -av '^. Test run with '; }
count() { results "$1" | grep -c .; }
known=$(results '^. Test .* passed after .* known issue' | sed -E 's/^. Test (.*) passed after .*/\1/' | sort -u)
passed=$(results '^(✔|━) Test .* passed after ' | grep -cv 'known issue')
failed=$(count '^✘ Test .* failed after ')
skipped=$(count '^➜ Test .* (skipped|was cancelled)')
known_count=$(printf '%s' "$known" | grep -c .)
listed=$([ "$known_count" -gt 0 ] && printf ': %s' "$(printf '%s\n' "$known" | paste -sd',' | sed 's/,/, /g')")
echo
echo "Swift tests: $passed passed, $failed failed, $skipped skipped, $known_count passed only with a known issue$listed (swift test $*)"
[ "$status" -eq 124 ] && echo "Swift tests: stopped by the time limit of $limit s (TEST_TIME_LIMIT); the tests still running then are listed above"
exit "$status"
