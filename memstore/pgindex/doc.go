// Package pgindex is the Postgres backend of memstore.Index, for teams and
// larger corpora. It ranks as the embedded index does (memstore.Ranking), in
// a single SQL statement: BM25F over the chunks' terms (memstore.Terms,
// computed in Go and stored as postings with per-field frequencies, with
// document frequencies and field lengths kept up to date by every write),
// the neighbour share, typo tolerance through the indexed vocabulary, a
// pgvector halfvec column (HNSW, cosine) for the vector ranking, and the
// weighted reciprocal rank fusion with its relevance floor. Full-text
// candidates are read term by term, highest impact first, at most
// Options.TextPool per term (four times as many for the query's rarest
// term), so a rare term contributes all its chunks and a common one its
// best, and a search's cost does not grow with the number of chunks
// sharing a common word. The best of them by an upper bound of their score
// have all the query's terms looked up through the postings' key, which
// ranks them by their stored impacts; the best of those, and the neighbours
// of the best, are then scored exactly. For large loads, ReplaceMany writes many
// files with COPY, and DropSearchIndexes and BuildSearchIndexes build the
// postings' impact index and the HNSW index once, after the load; the
// memstore mirror uses both (memstore.BatchIndex, memstore.BulkIndex).
//
// Every chunk and posting records its access zone (access.ZoneOf), and a
// search keeps to the zones of the query's access filter inside the
// statement, before ranking and limit: which query words count as known,
// typo stand-ins, and the candidates of both rankings. A filtered search
// reads postings zone by zone through their own index.
//
// Each memory's index lives in a Postgres schema of its own
// (Options.Schema, or one derived from the memory's identity, bound with
// BindMemory), reached through a pool pgindex derives from the caller's
// with search_path set to it; the vector extension is shared, in public.
// Memories sharing one database never read, write or rebuild each other's
// rows. Replicas of one memory share its schema: Exclusive serialises their
// index updates, and their writes' turns at the memory's remote, with an
// advisory lock, and Publish and Subscribe carry new commits between them
// over LISTEN/NOTIFY.
//
// It owns the tables of its schema: embedded SQL migrations applied in
// order under an advisory lock and recorded in selmem_schema_migrations,
// plus the embedding column, whose dimension follows the embedder and
// changes on Reset. It translates pgx and Postgres errors into memstore sentinels and
// its own ErrUnavailable, with messages that never carry connection
// details.
//
// It does not own the connection pool (the caller creates it, putting
// AfterConnect in pgxpool.Config.AfterConnect; pgindex's own pool for the
// schema copies its settings), nor chunking, embedding or
// mirroring git into the index: that is memstore's job.
package pgindex
