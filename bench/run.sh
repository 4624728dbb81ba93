#!/usr/bin/env bash
# Prints selmem's performance figures: medians (p50) and p99 per operation,
# from the Go benchmarks, each run in one process next to its baseline
# (e.g. a write with 10 files in the repository beside the same write with
# 10,000). Usage: bench/run.sh [package-pattern ...]; BENCHTIME sets the
# iterations (default 200x).
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${BENCHTIME:-200x}
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./memstore/...)
echo "selmem benchmarks on $(nproc) cores, $(go version | cut -d' ' -f3), benchtime $benchtime"
go test -run '^$' -bench . -benchtime "$benchtime" "${pkgs[@]}" 2>/dev/null |
	awk '/^Benchmark/ {
		name=$1; sub(/-[0-9]+$/, "", name)
		p50=""; p99=""; extra=""
		for (i = 3; i < NF; i++) {
			if ($(i+1) == "p50-ms") p50 = $i
			else if ($(i+1) == "p99-ms") p99 = $i
			else if ($(i+1) !~ /^(ns\/op|B\/op|allocs\/op)$/ && $(i+1) ~ /[a-z]/ && $i ~ /^[0-9.]+$/) extra = extra sprintf("  %s %s", $i, $(i+1))
		}
		if (p50 != "") printf "%-55s p50 %9s ms  p99 %9s ms%s\n", name, p50, p99, extra
		else printf "%-55s %s %s%s\n", name, $3, $4, extra
	}
	/^(ok|FAIL)/ { print "#", $0 }'
