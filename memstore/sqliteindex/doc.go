// Package sqliteindex is selmem's embedded, zero-set-up memstore.Index: one
// SQLite file (modernc.org/sqlite, pure Go) holding the chunks and their
// embeddings, in a table of their own. Everything a search ranks on is kept
// in memory, built by the first search: the chunks' filter fields, the
// embeddings dimension-major for exact cosine ranking, and an inverted index
// of the chunks' terms (memstore.Terms) with per-field lengths and document
// frequencies for BM25F. The rankings and their fusion follow
// memstore.Ranking. The query's access filter (memstore.Query.Filter)
// applies to every row either ranking considers and to the choice of known
// words and typo stand-ins; a filter letting few rows through has the vector
// ranking score only those.
//
// Several processes may open one file (selmem processes on one home): every
// write transaction advances a generation number stored in the file, and a
// search whose in-memory rows mirror an older generation than the file's
// reloads them first. A process's own writes update its rows in place.
//
// Memory: the embeddings take 4×dim bytes per chunk (100,000 chunks of the
// built-in embedder's 484 dimensions: 194 MB), the rows' filter fields and
// the inverted index about 900 bytes more per 60-word chunk
// (BenchmarkFirstSearch reports the heap of the whole: 245 MB at 100,000).
//
// It owns the file's schema and its consistency with the in-memory index.
// It does not chunk or embed files, or decide what to index or when
// (memstore's mirror of git does). The file is derived data; Open reports a
// file it cannot use with ErrCorrupt so the caller can delete and rebuild it.
package sqliteindex
