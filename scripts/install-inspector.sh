#!/usr/bin/env bash
# Installs the MCP Inspector CLI, pinned, into .cache/inspector (gitignored),
# for the end-to-end test in ./server. Idempotent: does nothing when the
# pinned version is already there. Prints the path of the CLI entry point.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${INSPECTOR_VERSION:-2.12.0}
dir=.cache/inspector
pkg=$dir/node_modules/@modelcontextprotocol/inspector/package.json
if [ ! -f "$pkg" ] || ! grep -q "\"version\": \"$version\"" "$pkg"; then
	command -v npm >/dev/null || { echo "install-inspector: npm not found" >&2; exit 1; }
	mkdir -p "$dir"
	[ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
		"@modelcontextprotocol/inspector@$version" >&2
fi
echo "$PWD/$dir/node_modules/.bin/mcp-inspector"
