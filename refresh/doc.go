// Package refresh keeps generated artifacts current without a model call.
//
// An artifact is a program (HTML, JavaScript, CSS) under
// /memories/workspaces/<ws>/artifacts/<name>/ that reads its data only
// through an injection point. Its binding.yaml names the connector the data
// comes from (a tool configuration, tools/<connector>.yaml), the columns the
// program was generated against and the current snapshot. A refresh loads
// the data through the connector, checks it still fits those columns,
// stores it as a content-addressed snapshot outside the git repository
// (memory keeps profiles, never raw data), updates the source's profile
// and the binding, and commits once. Data that no longer fits changes
// nothing and reports what diverged.
//
// A snapshot is served as an artifact's data only while the artifact
// retains it: a binding is written in git by whoever may write the
// artifact, and must not reach another artifact's data by naming its hash.
// A refresh refused before it starts (a principal who may not write the
// artifact, an artifact that does not exist) leaves nothing behind.
//
// The package also owns the snapshot store and its retention, the refresh
// schedule and file watching, serving an artifact with its data injected
// under a restrictive content security policy, read-only SQL over a
// snapshot, and an artifact's view for an MCP Apps host (View): its
// program made self-contained with the data by column (Frame), kept per
// snapshot from the refresh that loaded it, or, beyond the view's cap, the
// aggregate the binding declares (Aggregate). It does not own the outbound policy (internal/egress), the
// readers (profiler) or the MCP surface (tools, resources): it never
// imports an MCP library; an MCP connector is supplied by the caller.
package refresh
