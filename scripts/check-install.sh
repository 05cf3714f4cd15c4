#!/usr/bin/env bash
# `make check-install`: `make install` into a fresh PREFIX, then what a user would check there (every file where
# its convention says, the binary finding its installed models from any folder, the manual rendering, each shell's
# completions loading), then `make uninstall` and nothing may be left. Needs the release build (`make release`).
set -euo pipefail
prefix=$(mktemp -d /tmp/oct-prefix-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

make -s install PREFIX="$prefix" NO_DEPS=1 >/dev/null
echo "== installed in PREFIX=$prefix:"
(cd "$prefix" && find . -type f | sort | sed 's|^\./|  |')
bin=$prefix/bin/openclaw-talk
version=$(cd / && "$bin" --version)
echo "== openclaw-talk --version (run from /):"
echo "$version" | sed 's/^/  /'
grep -q "^models: $prefix/share/openclaw-talk/models$" <<<"$version" || fail "the installed binary did not find its installed models"
grep -q "Swift runtime linked in (static)" <<<"$version" || fail "the installed binary loads the Swift runtime from the toolchain"
grep -qxF "ExecStart=\"$bin\" run" "$prefix/lib/systemd/user/openclaw-talk.service" || fail "the unit does not start the installed binary"
man -l "$prefix/share/man/man1/openclaw-talk.1.gz" 2>&1 | grep -q "^EXIT STATUS" || fail "the manual does not render"
out=$(bash --norc -c "source '$prefix/share/bash-completion/completions/openclaw-talk'; COMP_WORDS=(openclaw-talk st); COMP_CWORD=1; _openclaw_talk; echo \${COMPREPLY[*]}")
[ "$out" = "start status stop" ] || fail "bash completion: '$out'"
out=$(fish --no-config -c "source '$prefix/share/fish/vendor_completions.d/openclaw-talk.fish'; complete -C 'openclaw-talk run --aec '" | cut -f1 | sort | tr '\n' ' ')
[ "$out" = "auto off pulse webrtc " ] || fail "fish completion: '$out'"
zsh -f -c "fpath=('$prefix/share/zsh/site-functions' \$fpath); autoload -Uz compinit; compinit -u -D; [[ \${_comps[openclaw-talk]} == _openclaw-talk ]]" || fail "zsh does not load the completion"
desktop-file-validate "$prefix/share/applications/openclaw-talk.desktop" || fail "desktop entry"
echo "== checks passed: models found, runtime linked in, unit, manual, bash/fish/zsh completions, desktop entry"

make -s uninstall PREFIX="$prefix" >/dev/null
left=$(cd "$prefix" && find . -mindepth 1 -not -type d | sort)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "== make uninstall: no file left in PREFIX"
