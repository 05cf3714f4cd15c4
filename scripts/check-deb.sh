#!/usr/bin/env bash
# `make check-deb` (as root): the package as a user meets it. Runs lintian (an error fails), installs
# out/openclaw-talk_*.deb with apt, checks what it installed (--version, the manual, the user unit, each shell's
# completions found where the shells look), runs the App Review walkthrough against /usr/bin/openclaw-talk, removes
# the package and checks nothing of it is left.
set -euo pipefail
deb=$(ls out/openclaw-talk_*.deb | tail -1)
fail() { echo "FAIL: $*" >&2; exit 1; }
echo "== $deb: $(du -h "$deb" | cut -f1) ($(stat -c %s "$deb") bytes), installed size $(dpkg-deb -f "$deb" Installed-Size) KiB"
dpkg-deb -f "$deb" Depends Recommends Suggests | sed 's/^/  /'
echo "== lintian $deb"
tags=$(lintian "$deb" 2>&1 || true)
[ -z "$tags" ] || echo "$tags" | sed 's/^/  /'
! grep -q '^E:' <<<"$tags" || fail "lintian reports errors"
echo "  no errors ($(grep -c '^W:' <<<"$tags" || true) warnings)"
echo "== apt-get install ./$deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "./$deb" 2>&1 | grep -E "^(Setting up|Unpacking) openclaw-talk|newly installed" | sed 's/^/  /'
[ "$(command -v openclaw-talk)" = /usr/bin/openclaw-talk ] || fail "openclaw-talk is not /usr/bin/openclaw-talk on PATH"
echo "== openclaw-talk --version"
(cd / && openclaw-talk --version) | sed 's/^/  /'
(cd / && openclaw-talk --version) | grep -q "^models: /usr/share/openclaw-talk/models$" || fail "models not found installed"
echo "== ldd: no library from the Swift toolchain"
! ldd /usr/bin/openclaw-talk | grep -E "swift|Foundation|dispatch|BlocksRuntime" || fail "links a toolchain library"
echo "== man openclaw-talk: $(MANPAGER=cat man openclaw-talk 2>/dev/null | sed -n 4p | sed 's/^ *//')"
echo "== systemd user unit: $(ls /usr/lib/systemd/user/openclaw-talk.service) ($(grep ^ExecStart= /usr/lib/systemd/user/openclaw-talk.service))"
# No user manager runs here: the unit file is checked by systemd's own parser in system mode. It exits 0 on what it
# ignores (an unknown Type=, a misspelt key), so anything it says fails the check.
verify=$(systemd-analyze verify /usr/lib/systemd/user/openclaw-talk.service 2>&1) || fail "systemd-analyze verify: $verify"
[ -z "$verify" ] || fail "systemd-analyze verify: $verify"
out=$(bash -c 'source /usr/share/bash-completion/bash_completion; _completion_loader openclaw-talk; COMP_WORDS=(openclaw-talk st); COMP_CWORD=1; _openclaw_talk; echo ${COMPREPLY[*]}')
echo "== bash: openclaw-talk st<TAB> -> $out"; [ "$out" = "start status stop" ] || fail bash
out=$(fish -c "complete -C 'openclaw-talk run --aec '" | cut -f1 | sort | tr '\n' ' ')
echo "== fish: openclaw-talk run --aec <TAB> -> $out"; [ "$out" = "auto off pulse webrtc " ] || fail fish
zsh -c 'autoload -Uz compinit; compinit -u -D; [[ ${_comps[openclaw-talk]} == _openclaw-talk ]]' || fail "zsh does not find _openclaw-talk on its default fpath"
echo "== zsh: _openclaw-talk found on the default fpath"
echo "== the walkthrough against /usr/bin/openclaw-talk"
timeout 600 scripts/with-pulse.sh python3 scripts/walkthrough.py /usr/bin/openclaw-talk
echo "== apt-get purge openclaw-talk"
files=$(dpkg -L openclaw-talk | while read -r f; do [ -f "$f" ] && echo "$f"; done)
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q openclaw-talk 2>&1 | grep -E "^(Removing|Purging) openclaw-talk" | sed 's/^/  /'
for f in $files; do [ ! -e "$f" ] || fail "left behind: $f"; done
[ ! -e /usr/share/openclaw-talk ] || fail "left behind: /usr/share/openclaw-talk"
echo "== removed: none of its $(echo "$files" | wc -l) files is left"
