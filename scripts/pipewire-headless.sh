#!/usr/bin/env bash
# Runs a private, headless PipeWire sound server in the foreground: the `pipewire` core, the `wireplumber`
# session manager and `pipewire-pulse` (the Pulse server most desktops run instead of PulseAudio), with
# no sound card and no D-Bus, a null sink `vsink` (16 kHz mono) and its monitor remapped as the virtual
# microphone `vmic` (scripts/pipewire/: the configuration it adds to Debian's).
#
#   pipewire-headless.sh DIR [PID]
#
# DIR is a 0700 folder of the caller's: the runtime folder (the Pulse socket DIR/runtime/pulse/native),
# WirePlumber's state and the three logs (DIR/*.log) go there. Readiness is the caller's to poll (pactl).
# It stops all three when the file DIR/stop appears, when it gets SIGTERM or SIGINT, when one of them dies,
# or when process PID (the caller) is gone, so a test process that crashes leaves nothing running. The stop
# file is for callers whose children inherit SIGTERM blocked (Foundation's Process does that), which a shell
# cannot unblock. Stopping is SIGKILL: to a Pulse client that is a server crash, which is what the tests
# that restart the server mean.
set -u
dir=${1:?usage: pipewire-headless.sh DIR [PID]}
parent=${2:-$PPID}
config=$(cd "$(dirname "$0")/pipewire" && pwd)

# Unlike PulseAudio, PipeWire keeps every descriptor it inherits: a caller's pipe held open by a server that
# runs for minutes would keep that caller's read of it from ever ending. Only stdio goes on (255 is bash's
# own hold on this script).
for fd in $(ls /proc/$$/fd); do
    ((fd > 2 && fd != 255)) && eval "exec $fd>&-" 2>/dev/null
done
mkdir -p -m 700 "$dir/runtime" "$dir/state"
# A restart (the tests kill the server and start it again in the same folder) finds the killed server's
# sockets: the wait for the core's socket below must see the new one, not connect to a dead one.
rm -f "$dir/stop" "$dir/runtime/pipewire-0" "$dir/runtime/pipewire-0.lock" "$dir/runtime/pulse/native" "$dir/runtime/pulse/pid"
export XDG_RUNTIME_DIR="$dir/runtime" XDG_CONFIG_HOME="$config" XDG_STATE_HOME="$dir/state"
export PIPEWIRE_RUNTIME_DIR="$dir/runtime"
unset PULSE_SERVER PIPEWIRE_REMOTE DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY

pids=() names=() watcher=
start() {
    "$1" >"$dir/$1.log" 2>&1 &
    pids+=($!) names+=("$1")
}
stop() {
    [ -n "$watcher" ] && kill -KILL "$watcher" 2>/dev/null
    ((${#pids[@]})) && kill -KILL "${pids[@]}" 2>/dev/null
    wait 2>/dev/null
    pids=()
}
trap 'stop; exit 0' TERM INT HUP
trap stop EXIT

start pipewire
# WirePlumber and pipewire-pulse give up when the core's socket is not there yet. The wait ends when the socket
# appears or the core exits; 90 s only catches a core that hangs.
SECONDS=0
until [ -S "$dir/runtime/pipewire-0" ]; do
    kill -0 "${pids[0]}" 2>/dev/null && [ "$SECONDS" -lt 90 ] || break
    sleep 0.025
done
start wireplumber
start pipewire-pulse
while kill -0 "$parent" 2>/dev/null && [ ! -e "$dir/stop" ]; do sleep 0.2; done &
watcher=$!

wait -n "${pids[@]}" "$watcher"
for i in "${!pids[@]}"; do
    kill -0 "${pids[$i]}" 2>/dev/null || echo "pipewire-headless: ${names[$i]} exited (its log: $dir/${names[$i]}.log)" >&2
done
