#!/usr/bin/env bash
# install-chromium.sh installs Debian's chromium so the browser tests
# (internal/browsertest and the tests that use it) can run headless.
#
# Idempotent: exits 0 at once when a browser is already there
# ($SELMEM_CHROMIUM, or chromium, chromium-browser, google-chrome or
# google-chrome-stable on PATH). Quiet: apt's output is shown only when it
# fails. Needs root and apt-get; otherwise it prints what to run and exits 1.
set -euo pipefail

log() { printf 'install-chromium: %s\n' "$*" >&2; }

if [[ -n "${SELMEM_CHROMIUM:-}" && -x "${SELMEM_CHROMIUM}" ]]; then
	exit 0
fi
for name in chromium chromium-browser google-chrome google-chrome-stable; do
	if command -v "$name" >/dev/null 2>&1; then
		exit 0
	fi
done

if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
	cat >&2 <<'MSG'
install-chromium: no Chromium or Chrome browser found.
Run this script as root on Debian/Ubuntu with apt:

    sudo scripts/install-chromium.sh

or install Chromium or Chrome another way and, if it is not on PATH as
chromium, chromium-browser or google-chrome, set SELMEM_CHROMIUM to it.
MSG
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
aptlog="$(mktemp)"
trap 'rm -f "$aptlog"' EXIT

# apt_quiet runs apt-get with its output in a log shown only on failure.
apt_quiet() {
	if ! apt-get -q -y -o=Dpkg::Use-Pty=0 "$@" >>"$aptlog" 2>&1; then
		log "apt-get $* failed:"
		tail -n 30 "$aptlog" >&2
		exit 1
	fi
}

log "installing chromium"
# Try with the package lists there are, so that a machine with fresh lists
# needs no update; update once and retry when that fails (a new image has
# no lists, an old one stale ones).
if ! apt-get -q -y -o=Dpkg::Use-Pty=0 install chromium >>"$aptlog" 2>&1; then
	apt_quiet update
	apt_quiet install chromium
fi
if ! command -v chromium >/dev/null 2>&1; then
	log "apt-get installed chromium but it is not on PATH"
	exit 1
fi
log "installed $(chromium --version 2>/dev/null || echo chromium)"
