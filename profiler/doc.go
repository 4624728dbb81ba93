// Package profiler turns tabular data sources into compact statistical
// profiles for an agent's memory: never raw data, only types, counts,
// ranges, quantiles, category catalogs, a few clipped sample rows and the
// relationships between sources.
//
// Sources (FileSource, SQLSource, RESTSource) are read as Apache Arrow
// record batches in one streaming pass. A delimited file's encoding,
// delimiter, header and any title lines above its table are sniffed from
// its first 64 KiB; lines may end in LF, CRLF or a bare CR. SQL and REST sources connect
// through the outbound policy of package internal/egress: read-only
// queries, no loopback, private or metadata address unless allowed,
// credentials only for the hosts they are bound to. Column statistics run in parallel
// (one goroutine per column job, batches in order, so results are
// deterministic) with bounded memory: exact value counts up to
// Options.ExactDistinct distinct values per column and 256 MiB across
// all columns, then HyperLogLog, KLL quantiles, SpaceSaving heavy hitters
// and a bottom-k join sketch.
//
// Profiles keep personal data and secrets out, as far as heuristic
// detection finds them. Each column is checked for emails, phone numbers,
// national ids, payment cards, IBANs, IP addresses, credentials and
// tokens, and (by its name and the values' shape) person names, street
// addresses and birth dates; a sensitive column keeps its counts, shapes
// and email domains but none of its values, and any other value shown
// (catalogs, sample rows, examples) that contains such data is replaced
// by a mask like <email>. See Sensitive and the rule in sensitive.go.
//
// Types are ones an agent can act on: a date or timestamp column has one
// layout, decided from all its values (MM/DD/YYYY hh:mm:ss AM, DD-MM-YYYY,
// ...), and counts the values that layout does not parse; integers named
// as codes (ZIP, precinct, id) are TypeCode, with a range and a catalog
// but no mean; decimal commas and thousands separators (1,234.5) parse;
// placeholder values (99999, -1, Unspecified) are listed; pairs of
// columns that identify rows are composite keys. Catalogs keep values as
// written, surrounding spaces included. Past the exact counter, only
// values whose count range is guaranteed are listed.
//
// A TableProfile renders as markdown within a token budget counted with
// the cl100k_base tokenizer (Tokens, Counter), as JSON through its struct
// tags, and as a complete memory file with front matter (SchemaFile). The
// budget is spent per column: essentials for every column first, then
// complete catalogs of up to 20 values, ranges, placeholders and
// warnings, then counts, top values, means and quantiles, then lengths
// and patterns, then sample rows. Every printed figure is exact or
// correctly rounded (the fidelity test checks each against a reference).
// Relate and RenderRelationships find join keys across sources.
//
// The package knows nothing of MCP, the memory store or where files are
// written; callers own that.
package profiler
