// Package mcpsource reads tabular records from a tool of another MCP
// server: the mcp connector of zero-token refresh.
//
// It owns:
//
//   - Server, an MCP server as the operator configures it: a command run
//     over stdio (with an empty environment except PATH, HOME and the
//     variables it names) or a streamable HTTP URL (dialled through the
//     outbound policy, optionally with a client certificate and a
//     credential header);
//   - Source, a profiler.Source that starts a session, calls one tool and
//     turns its structured content (or its JSON text content) into
//     records, bounded in size and time, and ends the session and the
//     process on every path.
//
// A tool configuration written by a model can only name a configured
// server: it never chooses a command, URL, certificate or credential.
// Resolving a name to a Server is the caller's job.
//
// It does not own the outbound policy (internal/egress), the profiling of
// the records (profiler) or refresh bindings (refresh). profiler, memstore
// and refresh do not import it; server and cmd wire it.
package mcpsource
