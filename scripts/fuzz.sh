#!/usr/bin/env bash
# fuzz.sh runs every fuzz target of the module for FUZZTIME each (default
# 30s): each `func FuzzX(f *testing.F)` in a _test.go file, found anew on
# every run so that a new target is never left out.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sort | while IFS=: read -r file decl; do
	name=${decl#func }
	pkg=./$(dirname "${file#./}")
	echo "== $pkg $name"
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime"
done
