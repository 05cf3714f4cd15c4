#!/usr/bin/env bash
# `make check-deb-fresh` (root, Debian's archive reachable): the package on a fresh Debian 12 with no Swift toolchain
# and none of the build's libraries. debootstrap makes a minimal bookworm in a scratch folder (about 3 minutes), apt
# installs out/openclaw-talk_*.deb there (pulling exactly its Depends), its files are where a user looks (unit,
# manual, completions, desktop entry and actions), the binary recognises a clip and speaks a sentence, and apt purge
# leaves none of its files. FRESH_ROOT=DIR reuses a root made before.
set -euo pipefail
deb=$(ls out/openclaw-talk_*.deb | tail -1)
root=${FRESH_ROOT:-$(mktemp -d /tmp/oct-fresh-XXXXXX)}
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ ! -x "$root/usr/bin/apt-get" ]; then
    echo "== debootstrap --variant=minbase bookworm $root"
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
fi
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
cp "$deb" /usr/share/pocketsphinx/test/data/goforward.raw "$root/tmp/"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive sh -c "$1"; }
in_root 'command -v swift >/dev/null && exit 1; ls /opt 2>/dev/null | grep -qi swift && exit 1; exit 0' || fail "this root has a Swift toolchain"
echo "== apt-get install ./$(basename "$deb") on a system without Swift"
in_root "apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends /tmp/$(basename "$deb")" | grep -E "newly installed|^Setting up openclaw-talk" | sed 's/^/  /'
echo "== what a user looks for, installed where the conventions say:"
for f in /usr/bin/openclaw-talk /usr/lib/systemd/user/openclaw-talk.service /usr/share/man/man1/openclaw-talk.1.gz \
         /usr/share/bash-completion/completions/openclaw-talk /usr/share/zsh/vendor-completions/_openclaw-talk \
         /usr/share/fish/vendor_completions.d/openclaw-talk.fish /usr/share/applications/openclaw-talk.desktop \
         /usr/share/file-manager/actions/openclaw-talk-send.desktop /usr/share/kio/servicemenus/openclaw-talk-send.desktop \
         /usr/share/nemo/actions/openclaw-talk-send.nemo_action; do
    [ -s "$root$f" ] || fail "missing: $f"
    echo "  $f"
done
grep -qx 'ExecStart="/usr/bin/openclaw-talk" run' "$root/usr/lib/systemd/user/openclaw-talk.service" || fail "the unit does not start /usr/bin/openclaw-talk"
echo "== openclaw-talk --version"
in_root 'cd / && openclaw-talk --version' | sed 's/^/  /'
out=$(in_root 'openclaw-talk transcribe /tmp/goforward.raw')
echo "== openclaw-talk transcribe goforward.raw: $out"
grep -q "go forward ten meters" <<<"$out" || fail "recognition"
in_root 'openclaw-talk say --output /tmp/hello.wav "Hello from a fresh Debian" >/dev/null && test -s /tmp/hello.wav' || fail "say"
echo "== openclaw-talk say --output hello.wav: $(stat -c %s "$root/tmp/hello.wav") bytes"
files=$(in_root 'dpkg -L openclaw-talk' | while read -r f; do [ -f "$root$f" ] && echo "$f"; done)
in_root 'apt-get purge -y -q openclaw-talk' | grep -E "^Removing openclaw-talk" | sed 's/^/  /'
for f in $files; do [ ! -e "$root$f" ] || fail "left behind: $f"; done
echo "== purged: none of its $(echo "$files" | wc -l) files is left"
