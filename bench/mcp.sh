#!/usr/bin/env bash
# Prints the MCP benchmarks' medians (p50) and p99: cold start of the built
# binary to the first tools/list answer with 10,000 files and an up-to-date
# index; memory_view calls/s over HTTP with 8 concurrent clients;
# memory_search over MCP (stdio) next to the store's own Search in one
# process; refresh_artifact at 10,000 rows to the view rendered in a browser
# MCP Apps host (needs Chromium and scripts/install-conformance.sh), next to
# the same page loaded over HTTP. BENCHTIME sets the iterations (default 30x; the HTTP benchmark
# runs 20,000 calls).
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${BENCHTIME:-30x}
echo "selmem MCP benchmarks on $(nproc) cores, $(go version | cut -d' ' -f3)"
{
	go test ./server -run '^$' -bench 'BenchmarkServe_(ColdStart|Search)' -benchtime "$benchtime" -count 1
	go test ./server -run '^$' -bench 'BenchmarkServe_HTTPView' -benchtime "${VIEW_CALLS:-20000}x" -count 1
	go test ./server -run '^$' -bench 'BenchmarkApps_RefreshToView' -benchtime "$benchtime" -count 1
} 2>/dev/null | awk '/^Benchmark/ {
	name=$1; sub(/-[0-9]+$/, "", name); out=""
	for (i = 3; i < NF; i++) if ($(i+1) ~ /(p50-ms|p99-ms|calls\/s)$/) out = out sprintf("  %s %s", $(i+1), $i)
	printf "%-45s%s\n", name, out
}
/^(ok|FAIL)/ { print "#", $0 }'
