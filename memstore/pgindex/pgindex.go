package pgindex

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/selmem/selmem/memstore"
)

// Defaults applied by New to zero Options fields.
const (
	DefaultEfSearch      = 100
	DefaultTextPool      = 9000
	DefaultMaxScanTuples = 1000
	DefaultQueryTimeout  = 5 * time.Second
	// DefaultHNSWM and DefaultHNSWEfConstruction are below pgvector's 16
	// and 64: together they build the HNSW index in about a third of the
	// time (16 s instead of 46 s for 100,000 chunks of the built-in
	// embedder), which is what brings a full rebuild above 2,000 chunks/s,
	// with the same hybrid recall@10 on bench/indexbench, because searches
	// also rescore the full-text candidates exactly.
	DefaultHNSWM              = 12
	DefaultHNSWEfConstruction = 32
)

// maxEfSearch is pgvector's upper bound for hnsw.ef_search.
const maxEfSearch = 1000

// maxHNSWDim is the largest halfvec dimension pgvector's HNSW index
// accepts; above it the embedding column is searched exactly, without an
// index.
const maxHNSWDim = 4000

// Log keys.
const (
	logKeyOp      = "op"
	logKeyErr     = "err"
	logKeyDim     = "dim"
	logKeyWantDim = "want_dim"
	logKeyVersion = "version"
	logKeyName    = "name"
	logKeySchema  = "schema"
)

// Options configure an Index. The zero value of every field but Dim selects
// its default.
type Options struct {
	// Dim is the dimension of the embedding column when New creates it
	// (the embedder's Dim). Required. An existing column keeps its
	// dimension until Reset records a state with another one.
	Dim int
	// EfSearch is hnsw.ef_search for vector rankings (default 100). Each
	// search raises it to its number of candidates, up to 1000.
	EfSearch int
	// MaxScanTuples is hnsw.max_scan_tuples (pgvector >= 0.8): how far an
	// iterative HNSW scan goes on looking for chunks that pass a filter.
	// The default, 1000, keeps a search restricted to a tenth of a million
	// chunks at about 5 ms where pgvector's 20000 costs 50 ms, with the same
	// hybrid recall: chunks it misses can still come through the full-text
	// pool.
	MaxScanTuples int
	// TextPool bounds how many chunks holding one query term the
	// full-text ranking reads, highest BM25F impact first (default 9000;
	// four times as many for the query's rarest term): every chunk of a
	// term rarer than that, the best of a commoner one. Larger is closer
	// to the embedded index's exact ranking and slower: on
	// bench/indexbench at 1,000,000 chunks, 2000 gives a top-10 overlap
	// with the embedded index of 0.70, 6000 of 0.81, 9000 of 0.83 (a
	// margin above 0.8 for 5 ms more at the median).
	TextPool int
	// HNSWM and HNSWEfConstruction are the build parameters (m,
	// ef_construction) of the HNSW index when pgindex creates it; zero
	// selects DefaultHNSWM and DefaultHNSWEfConstruction. They apply to
	// indexes created after New: by Reset with a new dimension, or by
	// BuildSearchIndexes.
	HNSWM              int
	HNSWEfConstruction int
	// BuildMemory is maintenance_work_mem for BuildSearchIndexes (e.g.
	// "2GB"); empty leaves the server's setting. The HNSW graph builds
	// several times faster when it fits: about 1.2 KB per chunk for 484
	// dimensions.
	BuildMemory string
	// QueryTimeout bounds every operation (default 5s); migrations get
	// twelve times as long.
	QueryTimeout time.Duration
	// Logger receives diagnostics, including driver errors in full; nil
	// discards them.
	Logger *slog.Logger
	// Ranking sets the ranking's parameters; nil means
	// memstore.DefaultRanking(). The embedded index given the same
	// parameters ranks alike.
	Ranking *memstore.Ranking
	// Schema is the Postgres schema holding this memory's tables, index
	// state and migration records (see CheckSchema for the names allowed);
	// pgindex creates it when missing. Empty means derived from the memory
	// the index is bound to (BindMemory): SchemaFor(id). An index neither
	// given a schema nor bound to a memory uses the connection's own
	// search_path (public), as versions before per-memory schemas did.
	Schema string
}

// Index is a memstore.Index stored in Postgres. It is safe for concurrent
// use.
type Index struct {
	pool      *pgxpool.Pool // base, or a pool of pgindex's own in schema
	base      *pgxpool.Pool // the caller's pool
	schema    string        // the memory's schema; publicSchema when unbound
	memory    string        // the memory bound with BindMemory; "" when none
	opts      Options
	rank      memstore.Ranking
	log       *slog.Logger
	iterative bool // pgvector >= 0.8: hnsw.iterative_scan is available
}

var (
	_ memstore.BatchIndex   = (*Index)(nil)
	_ memstore.BulkIndex    = (*Index)(nil)
	_ memstore.MemoryBinder = (*Index)(nil)
	_ memstore.SharedIndex  = (*Index)(nil)
	_ memstore.ChangeFeed   = (*Index)(nil)
)

// AfterConnect registers pgvector's types on a new connection, for
// binary transfer of vectors. Put it in pgxpool.Config.AfterConnect of the
// pool handed to New. Before the vector extension exists (a pool's first
// connection, made before New migrates) it registers nothing. A connection
// without the types sends vectors as text, which is correct, only slower;
// ReplaceMany, whose COPY needs them, registers them on the connection it
// uses.
func AfterConnect(ctx context.Context, conn *pgx.Conn) error {
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regtype('vector') IS NOT NULL`).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return nil
	}
	return pgxvec.RegisterTypes(ctx, conn)
}

// ensureTypes registers pgvector's types on conn unless it knows them.
func ensureTypes(ctx context.Context, conn *pgx.Conn) error {
	if _, ok := conn.TypeMap().TypeForName("halfvec"); ok {
		return nil
	}
	return pgxvec.RegisterTypes(ctx, conn)
}

// New returns an Index over pool, which the caller owns and closes, after
// applying pending migrations and creating the embedding column if needed,
// in Options.Schema when it is set. The Index keeps a pool of its own for
// its schema, with pool's settings; Close closes it.
func New(pool *pgxpool.Pool, opts *Options) (*Index, error) {
	return openIndex(pool, opts, "")
}

// openIndex is New for an index bound to memory (when not "").
func openIndex(pool *pgxpool.Pool, opts *Options, memory string) (*Index, error) {
	if pool == nil {
		return nil, invalid("New", "nil pool")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Dim <= 0 {
		return nil, invalid("New", "Options.Dim must be positive, got %d", o.Dim)
	}
	if o.Schema != "" {
		if err := CheckSchema(o.Schema); err != nil {
			return nil, invalid("New", "Options.Schema: %v", err)
		}
	}
	if o.EfSearch <= 0 {
		o.EfSearch = DefaultEfSearch
	}
	if o.EfSearch > maxEfSearch {
		o.EfSearch = maxEfSearch
	}
	if o.TextPool <= 0 {
		o.TextPool = DefaultTextPool
	}
	if o.MaxScanTuples <= 0 {
		o.MaxScanTuples = DefaultMaxScanTuples
	}
	if o.HNSWM <= 0 {
		o.HNSWM = DefaultHNSWM
	}
	if o.HNSWEfConstruction <= 0 {
		o.HNSWEfConstruction = DefaultHNSWEfConstruction
	}
	if o.HNSWEfConstruction < 2*o.HNSWM {
		return nil, invalid("New", "Options.HNSWEfConstruction (%d) must be at least twice HNSWM (%d)",
			o.HNSWEfConstruction, o.HNSWM)
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ix := &Index{pool: pool, base: pool, schema: publicSchema, opts: o, log: log, rank: memstore.DefaultRanking()}
	if o.Ranking != nil {
		ix.rank = *o.Ranking
	}
	if err := ix.attach(o.Schema, memory); err != nil {
		return nil, err
	}
	ix.memory = memory
	return ix, nil
}

// attach makes schema (or, when "", the caller's pool as it is) the
// index's home: it prepares the schema and claims it for memory, applies
// the migrations there and then switches to it, closing the pool of the
// schema it leaves.
func (ix *Index) attach(schema, memory string) error {
	ctx := context.Background()
	prev := *ix
	if schema != "" {
		sctx, cancel := context.WithTimeout(ctx, 12*ix.opts.QueryTimeout)
		pool, err := schemaPool(sctx, ix.base, schema, memory)
		if err != nil {
			err = ix.fail(sctx, "New", err)
		}
		cancel()
		if err != nil {
			return err
		}
		ix.pool, ix.schema = pool, schema
	}
	err := ix.Migrate(ctx)
	if err == nil {
		err = ix.detectVersion(ctx)
	}
	if err != nil {
		if ix.pool != prev.pool {
			ix.pool.Close()
		}
		ix.pool, ix.schema = prev.pool, prev.schema
		return err
	}
	if prev.pool != ix.base && prev.pool != ix.pool {
		prev.pool.Close()
	}
	ix.log.Debug("pgindex: using schema", logKeySchema, ix.schema)
	return nil
}

// Schema returns the Postgres schema holding the index: Options.Schema,
// the bound memory's, or public when neither.
func (ix *Index) Schema() string { return ix.schema }

// BindMemory implements memstore.MemoryBinder. Without Options.Schema the
// index moves to the memory's own schema (SchemaFor(id)), creating and
// migrating it; memstore.Open calls it before it uses the index, and it
// must not run concurrently with other calls. An index bound to one memory
// refuses another.
func (ix *Index) BindMemory(id string) error {
	const op = "BindMemory"
	switch {
	case id == "":
		return invalid(op, "empty memory id")
	case ix.memory == id:
		return nil
	case ix.memory != "":
		return invalid(op, "the index belongs to memory %s, not %s", ix.memory, id)
	}
	schema := ix.opts.Schema
	if schema == "" {
		var err error
		if schema, err = SchemaFor(id); err != nil {
			return invalid(op, "%v", err)
		}
	}
	if schema == ix.schema {
		// Options.Schema: already there; claim it for the memory.
		ctx, cancel := context.WithTimeout(context.Background(), ix.opts.QueryTimeout)
		defer cancel()
		if _, err := prepareSchema(ctx, ix.base, schema, id); err != nil {
			return ix.fail(ctx, op, err)
		}
	} else if err := ix.attach(schema, id); err != nil {
		return err
	}
	ix.memory = id
	return nil
}

// Close closes the pool the index keeps for its schema; the caller's pool
// stays open.
func (ix *Index) Close() error {
	if ix.pool != ix.base {
		ix.pool.Close()
	}
	return nil
}

// detectVersion records whether pgvector supports iterative index scans.
func (ix *Index) detectVersion(ctx context.Context) error {
	const op = "New"
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	var v string
	err := ix.pool.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&v)
	if err != nil {
		return ix.fail(ctx, op, err)
	}
	ix.iterative = versionAtLeast(v, 0, 8)
	return nil
}

// versionAtLeast reports whether a "major.minor[.patch]" version is at
// least major.minor.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// fail translates err and logs the driver error in full.
func (ix *Index) fail(ctx context.Context, op string, err error) error {
	terr := translate(ctx, op, err)
	var e *Error
	if errors.As(terr, &e) && e.Err != nil {
		ix.log.Debug("pgindex operation failed", logKeyOp, op, logKeyErr, e.Err.Error())
	}
	return terr
}

// retryRead runs the read-only fn, and runs it once more when it failed
// because a pooled connection had died (a restarted server leaves the pool's
// idle connections dead; the retry gets a fresh one).
func (ix *Index) retryRead(ctx context.Context, fn func() error) error {
	err := fn()
	if err == nil || ctx.Err() != nil || errors.Is(err, pgx.ErrNoRows) ||
		!errors.Is(translate(ctx, "", err), ErrUnavailable) {
		return err
	}
	return fn()
}

// Replace makes chunks the complete set stored for path, in one
// transaction serialised with other Replace calls on the same path.
func (ix *Index) Replace(ctx context.Context, path string, chunks []memstore.Chunk) error {
	if path == "" {
		return invalid("Replace", "empty path")
	}
	return ix.replace(ctx, "Replace", map[string][]memstore.Chunk{path: chunks})
}

// vectorArg returns v as a halfvec, the embedding column's type. It maps an
// empty or all-zero vector to SQL NULL: cosine distance
// is undefined for it, so it takes no part in vector rankings.
func vectorArg(v []float32) any {
	for _, x := range v {
		if x != 0 {
			return pgvector.NewHalfVector(v)
		}
	}
	return nil
}

// nullTime maps the zero time to SQL NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// DeletePath removes path's chunks and, when path names a directory, the
// chunks of every path below it.
func (ix *Index) DeletePath(ctx context.Context, path string) error {
	const op = "DeletePath"
	path = strings.TrimSuffix(path, "/")
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	// ~>=~ and ~<~ compare bytes, so they select exactly the paths that
	// start with path + "/" ('0' follows '/'), through the text_pattern_ops index.
	err := pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		if err := ix.lock(ctx, tx, "stats"); err != nil {
			return err
		}
		return remove(ctx, tx, "c.path = $1 OR (c.path ~>=~ $2 AND c.path ~<~ $3)", path, path+"/", path+"0")
	})
	return ix.fail(ctx, op, err)
}

// State returns the recorded state, or the zero IndexState when none.
func (ix *Index) State(ctx context.Context) (memstore.IndexState, error) {
	const op = "State"
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	var st memstore.IndexState
	err := ix.retryRead(ctx, func() error {
		return ix.pool.QueryRow(ctx, `SELECT commit, embedder, dim FROM selmem_index_state WHERE id = 1`).
			Scan(&st.Commit, &st.Embedder, &st.Dim)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return memstore.IndexState{}, nil
	}
	if err != nil {
		return memstore.IndexState{}, ix.fail(ctx, op, err)
	}
	return st, nil
}

const setStateSQL = `
INSERT INTO selmem_index_state (id, commit, embedder, dim) VALUES (1, $1, $2, $3)
ON CONFLICT (id) DO UPDATE SET commit = EXCLUDED.commit, embedder = EXCLUDED.embedder,
	dim = EXCLUDED.dim, updated_at = now()`

// SetState records st.
func (ix *Index) SetState(ctx context.Context, st memstore.IndexState) error {
	const op = "SetState"
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	_, err := ix.pool.Exec(ctx, setStateSQL, st.Commit, st.Embedder, st.Dim)
	return ix.fail(ctx, op, err)
}

// Reset deletes every chunk and records st, in one transaction. When
// st.Dim is positive and differs from the embedding column's dimension,
// the column and its HNSW index are dropped and recreated with st.Dim.
func (ix *Index) Reset(ctx context.Context, st memstore.IndexState) error {
	const op = "Reset"
	if st.Dim < 0 {
		return invalid(op, "negative dimension %d", st.Dim)
	}
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		if err := ix.lock(ctx, tx, "schema"); err != nil {
			return err
		}
		if err := ix.lock(ctx, tx, "stats"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `TRUNCATE selmem_postings, selmem_chunks, selmem_terms, selmem_words`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE selmem_lex_stats SET n = 0, sum_heading = 0, sum_path = 0, sum_text = 0`); err != nil {
			return err
		}
		if st.Dim > 0 {
			cur, err := columnDim(ctx, tx)
			if err != nil {
				return err
			}
			if cur != st.Dim {
				ix.log.Info("pgindex: recreating embedding column", logKeyDim, st.Dim)
				if err := ix.createEmbedding(ctx, tx, st.Dim, cur != 0); err != nil {
					return err
				}
			}
		}
		_, err := tx.Exec(ctx, setStateSQL, st.Commit, st.Embedder, st.Dim)
		return err
	})
	return ix.fail(ctx, op, err)
}
