#!/usr/bin/env bash
# release-check.sh checks, locally, what a release of selmem relies on:
#
#   1. goreleaser check: .goreleaser.yaml is valid;
#   2. goreleaser release --snapshot --clean --skip=publish: the six static
#      archives (linux/darwin/windows × amd64/arm64) and checksums.txt are
#      built into dist/, the checksums match, every binary is statically
#      linked, and the linux binary of this machine reports the snapshot
#      version;
#   3. go install github.com/selmem/selmem/cmd/selmem@VERSION, served from a
#      local module proxy made from HEAD, into an empty GOPATH: the binary
#      reports VERSION (from the build info, without -ldflags).
#
# It is slow (six cross builds, and goreleaser itself is built with go
# install the first time), so CI does not run it: run it before tagging
# (make release-check).
#
# Environment:
#   GORELEASER        goreleaser binary to use (default: on PATH, else built
#                     with go install into .cache/release-tools)
#   SKIP_GORELEASER=1 run step 3 only
set -euo pipefail
cd "$(dirname "$0")/.."

GORELEASER_VERSION=v2.15.1
CHECK_VERSION=v0.0.0-releasecheck
log() { printf 'release-check: %s\n' "$*" >&2; }

tmp="$(mktemp -d)"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

if [[ "${SKIP_GORELEASER:-}" != 1 ]]; then
	gr="${GORELEASER:-$(command -v goreleaser || true)}"
	if [[ -z "$gr" ]]; then
		tools="$PWD/.cache/release-tools"
		if [[ ! -x "$tools/goreleaser" ]]; then
			log "building goreleaser $GORELEASER_VERSION into $tools (once; takes minutes)"
			GOFLAGS= GOBIN="$tools" go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
		fi
		gr="$tools/goreleaser"
	fi
	log "goreleaser check"
	"$gr" check
	log "goreleaser release --snapshot --clean --skip=publish"
	"$gr" release --snapshot --clean --skip=publish >"$tmp/goreleaser.log" 2>&1 || {
		tail -n 40 "$tmp/goreleaser.log" >&2
		exit 1
	}
	(cd dist && sha256sum -c --quiet checksums.txt)
	n=$(find dist -maxdepth 1 \( -name 'selmem_*.tar.gz' -o -name 'selmem_*.zip' \) | wc -l)
	if [[ "$n" -ne 6 ]]; then
		log "want 6 archives in dist/, found $n"
		exit 1
	fi
	for bin in dist/selmem_*/selmem dist/selmem_*/selmem.exe; do
		[[ -f "$bin" ]] || continue
		if command -v file >/dev/null 2>&1 && file "$bin" | grep -q 'dynamically linked'; then
			log "$bin is dynamically linked"
			exit 1
		fi
	done
	native="$(find dist -path "*selmem_$(go env GOOS)_$(go env GOARCH)*/selmem" | head -n1)"
	if [[ -n "$native" ]]; then
		got="$("$native" --version)"
		log "$native --version: $got"
		case "$got" in "selmem "*snapshot*) ;; *)
			log "want the snapshot version"
			exit 1
			;;
		esac
	fi
	log "archives and checksums in dist/ are sound"
fi

# A module proxy holding HEAD as $CHECK_VERSION, as the public proxy would
# serve a tag: go install @version builds from the module zip, with no git
# metadata, exactly as a user's go install does.
mod=github.com/selmem/selmem
proxy="$tmp/proxy/$mod/@v"
mkdir -p "$proxy"
printf '%s\n' "$CHECK_VERSION" >"$proxy/list"
printf '{"Version":"%s","Time":"%s"}\n' "$CHECK_VERSION" "$(git log -1 --format=%cI HEAD)" >"$proxy/$CHECK_VERSION.info"
git show HEAD:go.mod >"$proxy/$CHECK_VERSION.mod"
git archive --format=tar --prefix="$mod@$CHECK_VERSION/" HEAD | (cd "$tmp" && tar -xf -)
(cd "$tmp" && find "$mod@$CHECK_VERSION" -type f | LC_ALL=C sort | zip -q -X "$proxy/$CHECK_VERSION.zip" -@)

log "go install $mod/cmd/selmem@$CHECK_VERSION into an empty GOPATH"
GOFLAGS= GOPATH="$tmp/gopath" GOMODCACHE="$(go env GOMODCACHE)" GOBIN="$tmp/bin" \
	GOPROXY="file://$tmp/proxy,$(go env GOPROXY)" GONOSUMDB="$mod" GOPRIVATE= \
	go install "$mod/cmd/selmem@$CHECK_VERSION"
got="$("$tmp/bin/selmem" --version)"
if [[ "$got" != "selmem $CHECK_VERSION" ]]; then
	log "go install @$CHECK_VERSION: selmem --version printed '$got', want 'selmem $CHECK_VERSION'"
	exit 1
fi
log "go install @$CHECK_VERSION reports '$got'"
log "all release checks passed"
