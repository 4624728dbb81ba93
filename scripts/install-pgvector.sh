#!/usr/bin/env bash
# install-pgvector.sh installs the pgvector extension for PostgreSQL 15 so the
# Postgres index backend (memstore/pgindex) and its tests can run.
#
# Debian bookworm ships no pgvector binary package for PostgreSQL 15, so this
# script builds it from the source package of the next Debian release
# (trixie), using the archive URI already configured for apt on this machine.
#
# To fetch that source it adds a deb-src entry for trixie
# (/etc/apt/sources.list.d/selmem-pgvector-src.sources) and removes it again
# when it exits, whether the build succeeded or not; it says so as it does.
# The trixie source index apt downloaded stays in /var/lib/apt/lists until
# the next apt-get update, which drops it.
#
# Idempotent: exits 0 at once when vector.control is already installed.
# Needs root and apt; otherwise it prints what to run and exits 1.
#
# Environment:
#   PG_CONFIG   pg_config of the target server
#               (default /usr/lib/postgresql/15/bin/pg_config)
set -euo pipefail

PG_MAJOR=15
PG_CONFIG="${PG_CONFIG:-/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config}"
SOURCES=/etc/apt/sources.list.d/debian.sources
SRC_LIST=/etc/apt/sources.list.d/selmem-pgvector-src.sources

log() { printf 'install-pgvector: %s\n' "$*" >&2; }

if [[ -x "$PG_CONFIG" ]]; then
	control="$("$PG_CONFIG" --sharedir)/extension/vector.control"
	if [[ -f "$control" ]]; then
		log "pgvector already installed ($control)"
		# An older version of this script left its deb-src entry behind.
		if [[ -f "$SRC_LIST" && -w "$(dirname "$SRC_LIST")" ]]; then
			rm -f "$SRC_LIST"
			log "removed the deb-src entry $SRC_LIST left by an earlier run"
		fi
		exit 0
	fi
fi

if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
	cat >&2 <<EOF
install-pgvector: pgvector for PostgreSQL ${PG_MAJOR} is not installed.
Run this script as root on Debian/Ubuntu with apt:

    sudo scripts/install-pgvector.sh

or install it from your distribution (e.g. postgresql-${PG_MAJOR}-pgvector)
or from source: https://github.com/pgvector/pgvector#installation
EOF
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive

work="$(mktemp -d)"
aptlog="$(mktemp)"
# cleanup removes the temporary files and the deb-src entry this script
# added (the file is this script's own: a copy left by an older version of
# it is removed too).
cleanup() {
	rm -rf "$work" "$aptlog"
	if [[ -f "$SRC_LIST" ]]; then
		rm -f "$SRC_LIST"
		log "removed the deb-src entry $SRC_LIST again"
	fi
}
trap cleanup EXIT
# apt downloads source packages as the _apt user when it can write the directory.
if id _apt >/dev/null 2>&1; then
	chown _apt "$work"
fi

# apt_quiet runs apt-get with its output in a log shown only on failure.
apt_quiet() {
	if ! apt-get -q -y -o=Dpkg::Use-Pty=0 "$@" >>"$aptlog" 2>&1; then
		log "apt-get $* failed:"
		tail -n 30 "$aptlog" >&2
		exit 1
	fi
}

# The archive URI of the main Debian suite, read from the existing apt
# configuration (deb822 format): the URIs of the first stanza whose suites
# are not a -security suite.
uri=""
if [[ -f "$SOURCES" ]]; then
	uri="$(awk '
		/^[[:space:]]*$/ { if (u != "" && !sec) { print u; exit } u = ""; sec = 0; next }
		/^URIs:/         { u = $2 }
		/^Suites:/       { if ($0 ~ /-security/) sec = 1 }
		END              { if (u != "" && !sec) print u }
	' "$SOURCES" | head -n1)"
fi
if [[ -z "$uri" ]]; then
	log "cannot find a Debian archive URI in $SOURCES"
	exit 1
fi
signed_by="$(awk '/^Signed-By:/ { print $2; exit }' "$SOURCES")"

missing=()
for pkg in "postgresql-server-dev-${PG_MAJOR}" build-essential dpkg-dev; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$pkg")
	fi
done

if [[ ! -f "$SRC_LIST" ]]; then
	log "adding deb-src for trixie ($SRC_LIST), removed again on exit"
	{
		echo "Types: deb-src"
		echo "URIs: $uri"
		echo "Suites: trixie"
		echo "Components: main"
		if [[ -n "$signed_by" ]]; then
			echo "Signed-By: $signed_by"
		fi
	} >"$SRC_LIST"
fi

log "apt-get update"
apt_quiet update

if ((${#missing[@]} > 0)); then
	log "installing ${missing[*]}"
	apt_quiet install --no-install-recommends "${missing[@]}"
fi

cd "$work"

log "fetching pgvector source"
apt_quiet source pgvector
src="$(find . -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n1)"
if [[ -z "$src" ]]; then
	log "apt-get source pgvector produced no source tree"
	exit 1
fi

log "building pgvector"
make_quiet() {
	if ! make -s -C "$src" PG_CONFIG="$PG_CONFIG" "$@" >>"$aptlog" 2>&1; then
		log "make $* failed:"
		tail -n 30 "$aptlog" >&2
		exit 1
	fi
}
make_quiet
make_quiet install

control="$("$PG_CONFIG" --sharedir)/extension/vector.control"
if [[ ! -f "$control" ]]; then
	log "build finished but $control is missing"
	exit 1
fi
log "installed pgvector $(awk -F"'" '/default_version/ { print $2 }' "$control") for PostgreSQL ${PG_MAJOR}"
