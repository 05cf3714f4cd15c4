#!/usr/bin/env bash
# Runs a command against a private, headless PulseAudio server (no sound card needed) and stops the
# server afterwards, also when the command fails. The server has a null sink `vsink` (16 kHz mono) whose
# monitor is remapped as the virtual microphone `vmic`: what is played into vsink comes back on vmic.
set -uo pipefail

dir=$(mktemp -d /tmp/openclaw-talk-pulse.XXXXXX)
chmod 700 "$dir"
mkdir -m 700 "$dir/runtime" "$dir/home"
export XDG_RUNTIME_DIR="$dir/runtime" HOME_FOR_PULSE="$dir/home"

# No session bus for the server: pulseaudio claims org.PulseAudio1 on the one it finds and exits if that name is
# taken (by the desktop's own PulseAudio, or another private server on the same bus).
# --disable-shm: PulseAudio 16 aborts now and then under load when a client's memfd block reaches it before the
# pool is registered ("non-registered memfd ID", then memblock.c's n_imported assertion): a server bug the tests
# cannot work around, which took the whole pass's server down. Copying the audio over the socket avoids it.
env -u DBUS_SESSION_BUS_ADDRESS -u DISPLAY -u WAYLAND_DISPLAY -u PULSE_SERVER HOME="$dir/home" \
    pulseaudio --daemonize=no --exit-idle-time=-1 -n --disallow-exit --use-pid-file=no --disable-shm=yes \
    --log-target=stderr --log-level=error \
    --load="module-native-protocol-unix auth-anonymous=1 socket=$dir/pulse.sock" \
    --load="module-null-sink sink_name=vsink rate=16000 channels=1" \
    --load="module-remap-source master=vsink.monitor source_name=vmic" \
    --load="module-always-sink" 2>"$dir/pulse.log" &
pulse_pid=$!

cleanup() {
    kill "$pulse_pid" 2>/dev/null
    wait "$pulse_pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# Ready when the socket answers. The wait ends at once if the server exits; its bound only catches a server that
# hangs (a loaded 2-core machine starts it in well under that).
export PULSE_SERVER="unix:$dir/pulse.sock"
SECONDS=0
until pactl info >/dev/null 2>&1; do
    if ! kill -0 "$pulse_pid" 2>/dev/null || [ "$SECONDS" -ge 90 ]; then
        echo "with-pulse: the private PulseAudio server did not start (exited, or hung for 90 s); its log:" >&2
        cat "$dir/pulse.log" >&2
        exit 1
    fi
    sleep 0.05
done
# On stderr: stdout belongs to the wrapped command (`with-pulse.sh openclaw-talk bench audio --json | jq`).
echo "with-pulse: private PulseAudio at $PULSE_SERVER" >&2
"$@"
status=$?
# A server that died under the command (an assertion in PulseAudio aborts it) leaves the tests after it failing on
# "Connection refused": its log, which cleanup removes, says why.
if ! kill -0 "$pulse_pid" 2>/dev/null; then
    wait "$pulse_pid"
    echo "with-pulse: the private PulseAudio server exited during the run (status $?); its log:" >&2
    cat "$dir/pulse.log" >&2
fi
exit "$status"
