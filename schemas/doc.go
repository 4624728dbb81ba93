// Package schemas owns writing data profiles into a workspace's memory:
// the schema file schemas/<name>.md (front matter and the budgeted
// markdown profile), its join sketches schemas/<name>.joins.csv, and
// schemas/relationships.md recomputed from every profile of the workspace,
// all in one commit. It also turns a description of a data source
// ([SourceSpec]) into a [profiler.Source], enforcing which files may be
// read (the data roots), resolving the connections and credentials a
// caller names through the outbound policy ([Access]), and keeping
// credentials out of what is stored.
//
// It sits over memstore and profiler and is shared by the command line
// (selmem profile) and the MCP tool profile_source. It does not profile
// (package profiler), hold memory semantics (package memstore) or know
// about MCP (package tools).
package schemas
