// Package pgindex is the Postgres backend of memstore.Index, for teams and
// larger corpora: chunks in one table with a generated, weighted tsvector
// (GIN) for full-text ranking and a pgvector halfvec column (HNSW, cosine)
// for semantic ranking, fused with reciprocal rank fusion (memstore.RRFK)
// in a single SQL statement. Both rankings score one bounded pool of
// candidates: the chunks matching every query word (up to
// Options.TextPool) and the nearest chunks through HNSW, so a search's cost
// does not grow with the number of chunks sharing a common word. For large
// loads, ReplaceMany writes many files with COPY, and DropSearchIndexes and
// BuildSearchIndexes build the GIN and HNSW indexes once, after the load;
// the memstore mirror uses both (memstore.BatchIndex, memstore.BulkIndex).
//
// It owns its schema: embedded SQL migrations applied in order under an
// advisory lock and recorded in selmem_schema_migrations, plus the
// embedding column, whose dimension follows the embedder and changes on
// Reset. It translates pgx and Postgres errors into memstore sentinels and
// its own ErrUnavailable, with messages that never carry connection
// details.
//
// It does not own the connection pool (the caller creates it, putting
// AfterConnect in pgxpool.Config.AfterConnect), nor chunking, embedding or
// mirroring git into the index: that is memstore's job.
package pgindex
