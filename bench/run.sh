#!/usr/bin/env bash
# Prints selmem's performance figures: the median (p50) and p99 of each
# operation from the Go benchmarks, each run in one process next to its
# baseline (e.g. a write with 10 files in the repository beside the same
# write with 10,000). bench/mcp.sh covers the MCP server and
# `go run ./bench/indexbench` the index backends side by side.
# SCALE multiplies the iteration counts (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${SCALE:-1}
echo "selmem benchmarks on $(nproc) cores, $(go version | cut -d' ' -f3)"

# bench PACKAGE PATTERN ITERATIONS
bench() {
	go test -run '^$' -bench "$2" -benchtime "$(($3 * scale))x" "$1" 2>/dev/null
}
{
	bench ./memstore 'Store_(Create|StrReplace)' 200
	bench ./memstore 'Store_(Open|History)' 50
	bench ./memstore 'Store_Reindex' 3
	bench ./memstore/sqliteindex 'BenchmarkSearch|BenchmarkOpen' 200
	bench ./memstore/pgindex 'BenchmarkStore_Reindex' 2
	PROFILER_BENCH_MB=${PROFILER_BENCH_MB:-1024} bench ./profiler 'BenchmarkProfileCSV' 2
	bench ./refresh 'BenchmarkRefresh' 40
} | awk '/^Benchmark/ {
		name=$1; sub(/-[0-9]+$/, "", name)
		p50=""; p99=""; extra=""
		for (i = 3; i < NF; i++) {
			if ($(i+1) == "p50-ms") p50 = $i
			else if ($(i+1) == "p99-ms") p99 = $i
			else if ($(i+1) !~ /^(ns\/op|B\/op|allocs\/op)$/ && $(i+1) ~ /[a-zA-Z]/ && $i ~ /^[0-9.]+$/) extra = extra sprintf("  %s %s", $i, $(i+1))
		}
		if (p50 != "") printf "%-55s p50 %9s ms  p99 %9s ms%s\n", name, p50, p99, extra
		else printf "%-55s %s ns/op%s\n", name, $3, extra
		fflush()
	}
	/^(ok|FAIL)/ { print "#", $0; fflush() }'
