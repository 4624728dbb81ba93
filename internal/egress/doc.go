// Package egress is selmem's one outbound-connection policy: every
// connection the profiler opens to a data source (and, later, every
// refresh connector) goes through it.
//
// It owns:
//
//   - the address check: loopback, link-local, private (RFC 1918, unique
//     local), shared (CGNAT), multicast, unspecified, broadcast,
//     documentation, benchmarking and other reserved addresses (the blocks
//     of the IANA special-purpose registries that are not globally
//     reachable), their IPv4-mapped, IPv4-compatible, 6to4 and NAT64 forms,
//     cloud metadata endpoints and this machine's own interface addresses,
//     read when each connection is made, are refused unless an
//     AllowedHosts entry names them;
//   - an HTTP client that resolves a name once, checks every address and
//     dials the checked address (no DNS rebinding), re-checks every
//     redirect, ignores proxy settings from the environment, and attaches a
//     configured credential only to the hosts it is bound to;
//   - SQL connections by configured name: Postgres configured from its DSN
//     alone (no PG* variables, ~/.pgpass or service files), SQLite opened
//     read-only and immutable behind an authorizer, and the one-statement,
//     read-only query check.
//
// Errors say what the policy refused and which setting would allow it; for
// targets it allows they do not tell a refused port from a silent one.
//
// It knows nothing of MCP, of memory or of the profiler: callers pass in
// their configuration (Config) and get connections out.
package egress
