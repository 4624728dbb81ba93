// Package memstore owns selmem's memory model: the git-backed Store of memory
// files under the virtual root /memories, the write gate every write passes,
// the Index interface with its mirror of git, the Embedder interface and
// hybrid search.
//
// Durability is the Store's first promise: a write is acknowledged only once
// its commit is reachable from HEAD on disk (objects flushed before the
// branch moves by git's lockfile protocol, see Durability), writers in
// every process that opens the same home serialise on a file lock in the
// repository, and an existing repository is never initialised again: a
// damaged branch is recovered or Open refuses.
//
// Workspaces travel as templates: PublishTemplate tags a published state,
// LoadTemplate copies what a template carries (specifications, tool
// configurations without credential bindings, schemas, artifacts without
// data) into a new workspace, and ExportWorkspace / ImportBundle move a
// workspace and its templates between servers as a git bundle.
// The published branch (refs/heads/main) is what everyone reads. A write
// may instead go to its principal's draft of a workspace
// (refs/drafts/<user>/<ws>, published by a three-way merge) or become a
// proposal (refs/proposals/<ws>/<id>, approved by an owner); Store.route
// decides. Neither touches the working files or the index, which mirror
// the published branch.
// Access is the Store's second promise, kept for every caller: each method
// acts for the principal its context carries (access.WithPrincipal; none
// is the local owner, who may do everything). Reads of what the principal
// may not read are refused with ErrDenied, which names the role needed;
// listings and histories leave such paths out; every write passes one
// check (see Store.write) that also makes the creator of a new workspace
// its owner and keeps ACL changes to owners. Roles come from the acl: of
// each workspace's workspace.yaml on the published branch and from
// Options.Policy (org admins); the access package decides.
//
// Replicas of one memory share a bare git repository (Options.Remote), the
// authority for the published branch: a write commits its objects locally
// under the lock and pushes with compare-and-swap before the local branch
// moves, so a write is acknowledged only once the remote has it; a push
// that lost a race fetches, fast-forwards and prepares the write again
// through the write gate. Sync and Follow bring a replica level with the
// remote; an index the replicas share (SharedIndex) applies each commit's
// changes once, whichever replica gets there first, and a ChangeFeed tells
// the others to fetch. Drafts and proposals stay on the replica that made
// them; publishing one is an ordinary, replicated write.
//
// Index backends live in sub-packages (sqliteindex, pgindex), embedders in
// embedder, the write gate's checks in gate. memstore knows nothing of MCP:
// the tools and resources packages are thin layers over it.
package memstore
