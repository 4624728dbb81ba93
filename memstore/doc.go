// Package memstore owns selmem's memory model: the git-backed Store of memory
// files under the virtual root /memories, the write gate every write passes,
// the Index interface with its mirror of git, the Embedder interface and
// hybrid search.
//
// Index backends live in sub-packages (sqliteindex, pgindex), embedders in
// embedder, the write gate's checks in gate. memstore knows nothing of MCP:
// the tools and resources packages are thin layers over it.
package memstore
