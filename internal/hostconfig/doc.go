// Package hostconfig renders the snippet that attaches selmem to an MCP
// host (Claude Code, Claude Desktop, Cursor, VS Code, Windsurf, Zed, the
// Codex CLI, the Gemini CLI): the file it goes in, in that host's
// documented shape, for a stdio server started from an absolute path or
// for selmem's streamable HTTP endpoint.
//
// It owns the shape of each host's configuration and nothing else: it
// writes no file (the user merges the snippet into theirs) and knows
// nothing of the server it describes beyond its command, arguments,
// environment and URL.
package hostconfig
