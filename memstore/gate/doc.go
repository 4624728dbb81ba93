// Package gate is the write gate every memory write passes: pure checks
// that decide whether a virtual path and the complete new content of a
// memory file may be stored.
//
// gate owns:
//   - path canonicalisation and refusal of traversal, look-alike and hidden
//     paths under the virtual root /memories ([Path], [FilePath]) and the
//     symlink check on the working tree ([NoSymlinks]);
//   - content checks ([Content]): per-file size, UTF-8, secrets,
//     transcripts and tool logs, raw data, front matter of markdown files
//     and the syntax of YAML and JSON files;
//   - secret detection: gitleaks' default rules (built once, shared) plus
//     the gate's own detectors where gitleaks is weaker, run over the raw
//     text and over normalised and decoded views of it (NFKC, zero-width
//     characters removed, escapes decoded, tokens split over lines joined,
//     base64 and hex runs decoded, values alone on the line after their
//     field name, table cells read as field: value, disguised field names
//     and Cyrillic or Greek look-alike letters in them made plain), user
//     / password pairs and one-word passwords after a password field;
//     documentation placeholders such as AKIAIOSFODNN7EXAMPLE pass. The same detectors check every path
//     element ([Path]) and short metadata values ([Text]);
//   - transcript detection in every file type: speaker turns, role-tagged
//     messages in JSON, YAML, CSV and HTML, tool-call logs, chat
//     templates, IRC and agent session logs, shell sessions with output,
//     stack traces, test-runner output and runs of log lines; lower-case
//     and emoji speaker labels count when their values read as turns of a
//     chat, or when four or more of them, also as list items, take turns
//     strictly as a short chat does;
//   - raw data detection: long runs of table rows (also ragged ones) or
//     records, also split over several fenced code blocks;
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
