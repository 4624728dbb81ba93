#!/usr/bin/env bash
# Prints refresh_artifact to a rendered MCP Apps view, at 10,000 rows
# (BenchmarkApps_RefreshToView: an open view updated in place, and
# BenchmarkApps_FirstView: a new view per result; see
# server/apps_bench_test.go), before and after: the benchmarks run on the
# tree at BASE (a commit; default the merge base with main) and on the
# working tree, alternately, ROUNDS times
# (default 3) of RUNS refreshes each (default 20), on the same machine at
# the same time. The benchmark harness (the benchmark, the test host page
# and the browser helpers) is the working tree's in both, so both are
# measured the same way. Needs Chromium and the ext-apps npm package
# (scripts/install-conformance.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
base=${BASE:-$(git merge-base HEAD main)}
rounds=${ROUNDS:-3}
runs=${RUNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/before"
git archive "$base" | tar -x -C "$tmp/before"
for f in server/apps_bench_test.go server/testdata/appshost/index.html internal/browsertest/frames.go; do
	cp "$here/$f" "$tmp/before/$f"
done
ln -s "$here/.cache" "$tmp/before/.cache"
echo "refresh_artifact to a rendered view, 10,000 rows, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "before: $(git log -1 --format='%h %s' "$base")"
echo "after:  $(git log -1 --format='%h %s' HEAD)$(git diff --quiet HEAD || echo ' (+ uncommitted changes)')"
run() {
	# Build first, and write back what earlier runs left dirty, so that
	# neither slows the flushes of the refreshes measured.
	(cd "$1" && go test -c -o /dev/null ./server/)
	sync
	(cd "$1" && go test -run '^$' -bench 'Apps_(RefreshToView|FirstView)' -benchtime "${runs}x" ./server/ 2>&1) |
		awk -v label="$2" '/^BenchmarkApps_/ {
			name = $1; sub(/^BenchmarkApps_/, "", name); sub(/-[0-9]+$/, "", name)
			line = label " " name
			for (i = 3; i < NF; i++) if ($(i+1) ~ /-ms$/) line = line sprintf("  %s %s", $(i+1), $i)
			print line; fflush()
		}
		/^(FAIL|panic)/ { print label, $0 }'
}
for r in $(seq "$rounds"); do
	run "$tmp/before" "round $r before:"
	run "$here" "round $r after: "
done
