#!/usr/bin/env bash
# Runs a command against a private, headless PulseAudio server (no sound card needed) and stops the
# server afterwards, also when the command fails. The server has a null sink `vsink` (16 kHz mono) whose
# monitor is remapped as the virtual microphone `vmic`: what is played into vsink comes back on vmic.
set -uo pipefail

dir=$(mktemp -d /tmp/openclaw-talk-pulse.XXXXXX)
chmod 700 "$dir"
mkdir -m 700 "$dir/runtime" "$dir/home"
export XDG_RUNTIME_DIR="$dir/runtime" HOME_FOR_PULSE="$dir/home"

HOME="$dir/home" pulseaudio --daemonize=no --exit-idle-time=-1 -n --disallow-exit --use-pid-file=no \
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

export PULSE_SERVER="unix:$dir/pulse.sock"
for _ in $(seq 100); do
    [ -S "$dir/pulse.sock" ] && pactl info >/dev/null 2>&1 && break
    sleep 0.05
done
if ! pactl info >/dev/null 2>&1; then
    echo "with-pulse: the private PulseAudio server did not start; its log:" >&2
    cat "$dir/pulse.log" >&2
    exit 1
fi
# On stderr: stdout belongs to the wrapped command (`with-pulse.sh openclaw-talk bench audio --json | jq`).
echo "with-pulse: private PulseAudio at $PULSE_SERVER" >&2
"$@"
