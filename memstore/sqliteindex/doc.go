// Package sqliteindex is selmem's embedded, zero-set-up memstore.Index: one
// SQLite file (modernc.org/sqlite, pure Go) holding the chunks, an FTS5
// full-text index ranked by BM25, and the embeddings, in a table of their
// own. The embeddings and the chunks' filter fields are also kept in memory,
// loaded by the first search: the embeddings dimension-major for exact cosine
// ranking, the filter fields for both rankings. Full-text matches rank by how
// many of the query's words they contain, then by BM25. The two rankings are
// fused with reciprocal rank fusion (memstore.RRFK).
//
// It owns the file's schema and its consistency with the in-memory vectors.
// It does not chunk or embed files, decide what to index or when (memstore's
// mirror of git does), or share the file between processes: one process owns
// an index file at a time. The file is derived data; Open reports a file it
// cannot use with ErrCorrupt so the caller can delete and rebuild it.
package sqliteindex
