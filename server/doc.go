// Package server wires selmem together for serving: its configuration
// (Config, DefaultConfig, Validate), the MCP server over memstore
// (NewMCPServer: tools, resources, instructions) and its transports (stdio
// and streamable HTTP with a health endpoint). It holds no domain logic:
// memory semantics live in memstore, tool handlers in tools, resources in
// resources.
package server
