// Package crashtest is a crash-consistency harness for selmem's git-backed
// store. It drives the real selmem binary from the outside only: MCP clients
// over streamable HTTP and `selmem create` processes write to one home while
// the server is SIGKILLed at a random moment; the server is restarted on the
// same home and every write that was acknowledged is looked for at HEAD with
// the real git CLI and over MCP.
//
// A write is ACKNOWLEDGED when its MCP tool result is not an error, or its
// CLI process exited 0. It FAILED when the result is an error or the process
// exited non-zero: it must have left nothing. It is UNKNOWN when the client
// got no answer (the server died, or the harness killed the CLI process):
// it may or may not be present and counts neither way.
//
// Invariants checked after every round (see [Run]), on the home as the
// server's restart left it unless said otherwise:
//  1. every acknowledged write is at HEAD with its latest acknowledged
//     content (git cat-file on HEAD:<path>) and memory_view shows it;
//  2. git fsck --strict reports no errors, both as the crash left the
//     repository (before the restart: a crash must not leave a repository
//     git cannot read, such as an empty ref) and after the restart;
//     "dangling" lines are ignored: an interrupted write may leave
//     unreferenced objects;
//  3. the work tree equals HEAD after the restart (which may repair working
//     files an interrupted write left behind), by git status against a
//     fresh index read from HEAD, so a stale .git/index is not counted;
//  4. memory_search finds a sample of acknowledged writes by a unique token;
//  5. memory_view and memory_str_replace agree on a sample;
//  6. a failed write left nothing (unique path per attempt);
//  7. no new root commit: HEAD descends from the previous round's HEAD.
package crashtest
