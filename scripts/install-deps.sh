#!/usr/bin/env bash
# Installs the Debian and PyPI packages openclaw-talk builds and tests with, when missing.
# As root it installs them; otherwise it prints the exact command to run and fails.
# `install-deps.sh package` adds what `make deb` and its checks need (debhelper, lintian, debootstrap, bash-completion).
set -euo pipefail

DEB_PACKAGES=(
    pkg-config libssl-dev
    libpulse-dev pulseaudio pulseaudio-utils
    libopus-dev libopusfile-dev libopusenc-dev libogg-dev opus-tools libsoxr-dev sox
    libpocketsphinx-dev libsphinxbase-dev pocketsphinx pocketsphinx-en-us pocketsphinx-testdata
    libespeak-ng-dev espeak-ng
    libmpg123-dev lame libwebrtc-audio-processing-dev libspeexdsp-dev
    libsystemd-dev
    libnotify-dev dbus-daemon           # desktop notifications; the tests' notification server runs on a private bus
    rtkit                                # realtime audio threads for desktop users: the tests run its daemon on a private system bus
    pipewire pipewire-pulse wireplumber  # make test-pipewire; they enable user units for the next login
    scdoc man-db desktop-file-utils      # the manual (docs/openclaw-talk.1.scd) and its test; the desktop entry's test
    bash zsh fish                        # the completion tests run each shell
    jq                                   # scripts/swift-test-pass.sh counts each pass from Swift Testing's event stream
    chromium                             # the benchmark report's test renders the page headless
)
if [ "${1:-}" = package ]; then
    DEB_PACKAGES+=(dpkg-dev debhelper fakeroot lintian git debootstrap bash-completion)  # bash-completion: check-deb loads the completion as bash does
fi
PY_MODULES=(websockets cryptography jsonschema matplotlib dbus_next)  # matplotlib: the benchmark report's plots; dbus_next: the tests' notification server

missing_deb=()
for p in "${DEB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_deb+=("$p")
done
if ((${#missing_deb[@]})); then
    if [ "$(id -u)" = 0 ]; then
        echo "Installing Debian packages: ${missing_deb[*]}"
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing_deb[@]}" >/dev/null
    else
        echo "Missing Debian packages. Run:" >&2
        echo "  sudo apt-get install ${missing_deb[*]}" >&2
        exit 1
    fi
fi

missing_py=()
for m in "${PY_MODULES[@]}"; do
    python3 -c "import $m" 2>/dev/null || missing_py+=("${m//_/-}")
done
if ((${#missing_py[@]})); then
    if [ "$(id -u)" = 0 ]; then
        echo "Installing Python packages: ${missing_py[*]}"
        python3 -m pip install -q --root-user-action=ignore "${missing_py[@]}"
    else
        python3 -m pip install -q --user "${missing_py[@]}" || {
            echo "Missing Python packages. Run:" >&2
            echo "  python3 -m pip install --user ${missing_py[*]}" >&2
            exit 1
        }
    fi
fi
