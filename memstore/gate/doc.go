// Package gate is the write gate every memory write passes: pure checks
// that decide whether a virtual path and the complete new content of a
// memory file may be stored.
//
// gate owns:
//   - path canonicalisation and refusal of traversal, look-alike and hidden
//     paths under the virtual root /memories ([Path], [FilePath]) and the
//     symlink check on the working tree ([NoSymlinks]);
//   - content checks ([Content]): per-file size, UTF-8, secrets,
//     transcripts and tool logs, front matter of markdown files and the
//     syntax of YAML and JSON files;
//   - the markdown front matter model ([FrontMatter], [ParseFrontMatter]);
//   - the [Limits] that bound a write, with defaults and validation.
//
// gate does not own: the per-workspace byte budget (the store knows the
// totals and compares them with [Limits].MaxWorkspaceBytes), access control,
// proposals for weak evidence, git, the index, or logging. It never imports
// memstore; memstore imports it and wraps a [*Rejection] in its ErrRejected.
//
// Every refusal is a [*Rejection] whose Error text is written for an AI
// model: it says what was wrong and what to do, and never repeats a secret
// or the offending bytes (lines are given by number, characters by code
// point).
package gate
