// Package server wires selmem together for serving: its configuration
// (Config, DefaultConfig, Validate), the MCP server over memstore
// (NewMCPServer: tools, resources, instructions) and its transports (stdio
// and streamable HTTP with a health endpoint), and what selmem puts between
// mcp-go and the wire so that clients get what the protocol specifies: no
// response to a cancelled request, the error codes of the negotiated
// revision, checked list cursors, log messages on request, and
// notifications delivered once on a stream the client listens on
// (exchange.go, hooks.go). It holds no domain logic:
// memory semantics live in memstore, tool handlers in tools, resources in
// resources.
package server
