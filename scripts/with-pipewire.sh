#!/usr/bin/env bash
# Runs a command against a private, headless PipeWire (pipewire + wireplumber + pipewire-pulse, the sound
# server most desktops run) and stops it afterwards, also when the command fails: the same contract as
# scripts/with-pulse.sh, the same null sink `vsink` (16 kHz mono) and virtual microphone `vmic` on its
# monitor. It sets OPENCLAW_TALK_SOUND_SERVER=pipewire, which tells the tests which server they run against
# (the audio suites start servers of their own with scripts/pipewire-headless.sh).
set -uo pipefail

dir=$(mktemp -d /tmp/openclaw-talk-pipewire.XXXXXX)
chmod 700 "$dir"
"$(dirname "$0")/pipewire-headless.sh" "$dir" $$ &
server_pid=$!

cleanup() {
    touch "$dir/stop"  # SIGTERM may be blocked in what this script was started with (pipewire-headless.sh)
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

export PULSE_SERVER="unix:$dir/runtime/pulse/native" OPENCLAW_TALK_SOUND_SERVER=pipewire
# Ready once the Pulse server answers and WirePlumber has made vsink and vmic the defaults. The wait ends at once
# if the server exits; its bound only catches one that hangs (a loaded 2-core machine takes seconds, not 90).
ready() { pactl info 2>/dev/null | grep -q '^Default Source: vmic$' && pactl info | grep -q '^Default Sink: vsink$'; }
SECONDS=0
until ready; do
    kill -0 "$server_pid" 2>/dev/null && [ "$SECONDS" -lt 90 ] || break
    sleep 0.05
done
if ! ready; then
    echo "with-pipewire: the private PipeWire did not start (exited, or no vsink and vmic after 90 s); its logs:" >&2
    for log in "$dir"/*.log; do echo "--- $log" >&2; cat "$log" >&2; done
    pactl info >&2
    exit 1
fi
# On stderr: stdout belongs to the wrapped command.
echo "with-pipewire: private PipeWire ($(pactl info | sed -n 's/^Server Name: //p')) at $PULSE_SERVER" >&2
"$@"
