package sqliteindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/selmem/selmem/memstore"
)

// ErrCorrupt reports an index file that is not a SQLite database, is damaged,
// or has a schema this version does not know. The file is derived data: the
// caller deletes it and rebuilds.
var ErrCorrupt = errors.New("index file corrupt or of an unknown schema")

// schemaVersion is stored in PRAGMA user_version; any other non-zero value
// is ErrCorrupt. Version 2 moved the embeddings out of chunks into vectors;
// version 3 dropped the FTS5 table: the full-text index is built in memory;
// version 4 holds the terms of memstore.Stem's irregular inflections
// ("ran" as "run").
const schemaVersion = 4

// schema creates a new index file. AUTOINCREMENT keeps row ids from being reused, so an id read by a search
// never names a different chunk later. The embeddings live in their own
// narrow table, keyed by the chunk's id, so that loading them scans only
// vectors and reading a chunk never pages in its embedding.
const schema = `
CREATE TABLE chunks (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	path       TEXT    NOT NULL,
	seq        INTEGER NOT NULL,
	workspace  TEXT    NOT NULL,
	scope      TEXT    NOT NULL,
	type       TEXT    NOT NULL,
	heading    TEXT    NOT NULL,
	start_line INTEGER NOT NULL,
	end_line   INTEGER NOT NULL,
	context    TEXT    NOT NULL,
	text       TEXT    NOT NULL,
	source     TEXT    NOT NULL,
	confidence REAL    NOT NULL,
	valid_from INTEGER,
	invalid_at INTEGER,
	expires_at INTEGER,
	"commit"   TEXT    NOT NULL,
	UNIQUE (path, seq)
);
CREATE TABLE vectors (
	id        INTEGER PRIMARY KEY,
	embedding BLOB    NOT NULL
);
CREATE TABLE state (
	id       INTEGER PRIMARY KEY CHECK (id = 1),
	"commit" TEXT    NOT NULL,
	embedder TEXT    NOT NULL,
	dim      INTEGER NOT NULL
);
` + generationSchema

// generationSchema holds the file's generation: a number every write
// transaction, by any process, increments. A search compares it with the
// generation its in-memory rows were loaded or last updated at, and reloads
// them when another process wrote the file since. Files created before it
// existed have it added by Open (addGeneration).
const generationSchema = `
CREATE TABLE generation (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
);
INSERT INTO generation (id, n) VALUES (1, 0);
`

// mmapSize is the most of the index file SQLite maps into memory.
const mmapSize = 1 << 30

// Log keys.
const (
	logKeyPath     = "path"
	logKeyRows     = "rows"
	logKeyFiles    = "files"
	logKeyDuration = "duration"
)

// Options configures an Index. The zero value and nil are valid.
type Options struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Ranking sets the ranking's parameters; nil means
	// memstore.DefaultRanking().
	Ranking *memstore.Ranking
}

// Index is the SQLite memstore.Index. It is safe for concurrent use; writes
// are serialised.
type Index struct {
	db   *sql.DB
	log  *slog.Logger
	rank memstore.Ranking

	// writeMu serialises writers (Replace, DeletePath, SetState, Reset).
	writeMu sync.Mutex

	// mu makes a commit and the matching change of vecs one step: writers
	// hold it exclusively around tx.Commit and the in-memory update,
	// searches hold it shared, so a search sees the file and the vectors at
	// the same state.
	mu   sync.RWMutex
	dim  int       // recorded dimension; written under writeMu and mu
	vecs *vecStore // nil until the first search loads it
	gen  int64     // the file's generation vecs mirrors; written under mu

	genStmt   *sql.Stmt // reads the generation
	fetchStmt *sql.Stmt // reads the chunks of hits (fetchQuery)
}

var _ memstore.BatchIndex = (*Index)(nil)

// Open opens or creates the index file at path. It reads no chunks: their
// filter fields and vectors are loaded on the first search. A file that is not
// an index of this schema version yields an error wrapping ErrCorrupt.
func Open(path string, opts *Options) (*Index, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("open index %q: path must be non-empty and free of '?': %w", path, memstore.ErrInvalid)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if opts != nil && opts.Logger != nil {
		log = opts.Logger
	}
	// Memory-mapped reads spare loadVecStore a system call and a copy per
	// page; the mapping is address space, not memory.
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
		fmt.Sprintf("&_pragma=mmap_size(%d)&_txlock=immediate", mmapSize)
	idx := &Index{log: log, rank: memstore.DefaultRanking()}
	if opts != nil && opts.Ranking != nil {
		idx.rank = *opts.Ranking
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	idx.db = db
	if err := idx.init(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	return idx, nil
}

// init checks the schema version, creating the schema in an empty file, and
// reads the recorded dimension.
func (i *Index) init(ctx context.Context) error {
	var version int
	if err := i.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return classify(err)
	}
	switch version {
	case schemaVersion:
	case 0:
		if err := i.create(ctx); err != nil {
			return err
		}
	default:
		return fmt.Errorf("schema version %d, this build reads %d: %w", version, schemaVersion, ErrCorrupt)
	}
	if err := i.addGeneration(ctx); err != nil {
		return err
	}
	st, err := i.State(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	i.dim = st.Dim
	if i.genStmt, err = i.db.PrepareContext(ctx, "SELECT n FROM generation WHERE id = 1"); err != nil {
		return classify(err)
	}
	if i.fetchStmt, err = i.db.PrepareContext(ctx, fetchQuery); err != nil {
		return classify(err)
	}
	return nil
}

// addGeneration adds the generation table to a file written before it
// existed. Another process may be adding it at the same time: the check is
// repeated inside the write transaction.
func (i *Index) addGeneration(ctx context.Context) error {
	const exists = "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'generation')"
	var ok bool
	if err := i.db.QueryRowContext(ctx, exists).Scan(&ok); err != nil || ok {
		return classify(err)
	}
	tx, err := i.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, exists).Scan(&ok); err != nil || ok {
		return classify(err)
	}
	if _, err := tx.ExecContext(ctx, generationSchema); err != nil {
		return fmt.Errorf("add the generation table: %w", classify(err))
	}
	return tx.Commit()
}

// generation returns the file's generation as committed now.
func (i *Index) generation(ctx context.Context) (int64, error) {
	var n int64
	if err := i.genStmt.QueryRowContext(ctx).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the index generation: %w", classify(err))
	}
	return n, nil
}

// writeTx is a write transaction that has advanced the file's generation.
type writeTx struct {
	*sql.Tx
	gen int64 // the generation it commits
	// dim is the recorded dimension, as read in the transaction; a
	// transaction that records another one sets it.
	dim int
	// reset tells that the transaction leaves the index empty.
	reset bool
}

// begin starts a write transaction, advances the file's generation and
// reads the recorded dimension. The transaction holds SQLite's write lock
// from its start (_txlock=immediate), so no other process commits between
// these reads and its commit.
func (i *Index) begin(ctx context.Context) (*writeTx, error) {
	tx, err := i.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	w := &writeTx{Tx: tx}
	if err := tx.QueryRowContext(ctx, "UPDATE generation SET n = n + 1 WHERE id = 1 RETURNING n").Scan(&w.gen); err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("advance the index generation: %w", err)
	}
	if err := tx.QueryRowContext(ctx, "SELECT coalesce((SELECT dim FROM state WHERE id = 1), 0)").Scan(&w.dim); err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("read the index dimension: %w", err)
	}
	return w, nil
}

// commit commits tx and brings the in-memory rows along, in one step for
// searches. When they mirrored the generation just before tx, tx's changes
// are all they miss: apply (nil: nothing to do) updates them and returns
// whether they are still good. Otherwise another process wrote meanwhile,
// and they are dropped for the next search to reload. After a reset they
// are empty whatever came before.
func (i *Index) commit(tx *writeTx, apply func(vs *vecStore) bool) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if err := tx.Commit(); err != nil {
		return err
	}
	switch {
	case tx.reset:
		i.vecs = newVecStore(tx.dim, 0)
	case i.vecs == nil:
	case tx.gen != i.gen+1 || apply != nil && !apply(i.vecs):
		i.vecs = nil
	}
	i.gen, i.dim = tx.gen, tx.dim
	return nil
}

// create writes the schema into a file that has none.
func (i *Index) create(ctx context.Context) error {
	tx, err := i.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback()
	var tables int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return classify(err)
	}
	if tables > 0 {
		return fmt.Errorf("database without a schema version holds %d objects: %w", tables, ErrCorrupt)
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	return nil
}

// classify wraps SQLite's "not a database" and "corrupt" errors in
// ErrCorrupt.
func classify(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
	}
	return err
}

// Close closes the database and drops the in-memory vectors.
func (i *Index) Close() error {
	i.mu.Lock()
	i.vecs = nil
	i.mu.Unlock()
	for _, st := range []*sql.Stmt{i.genStmt, i.fetchStmt} {
		if st != nil {
			st.Close()
		}
	}
	if err := i.db.Close(); err != nil {
		return fmt.Errorf("close index: %w", err)
	}
	return nil
}

// State returns the recorded state, or the zero IndexState.
func (i *Index) State(ctx context.Context) (memstore.IndexState, error) {
	return readState(ctx, i.db)
}

// readState reads the state row of the index file db holds.
func readState(ctx context.Context, db *sql.DB) (memstore.IndexState, error) {
	var st memstore.IndexState
	err := db.QueryRowContext(ctx, `SELECT "commit", embedder, dim FROM state WHERE id = 1`).
		Scan(&st.Commit, &st.Embedder, &st.Dim)
	if errors.Is(err, sql.ErrNoRows) {
		return memstore.IndexState{}, nil
	}
	if err != nil {
		return memstore.IndexState{}, fmt.Errorf("read index state: %w", classify(err))
	}
	return st, nil
}

// SetState records st. Changing the dimension of an index that holds
// chunks is refused: that needs Reset.
func (i *Index) SetState(ctx context.Context, st memstore.IndexState) error {
	if st.Dim < 0 {
		return fmt.Errorf("set index state: negative dimension %d: %w", st.Dim, memstore.ErrInvalid)
	}
	i.writeMu.Lock()
	defer i.writeMu.Unlock()
	tx, err := i.begin(ctx)
	if err != nil {
		return fmt.Errorf("set index state: %w", err)
	}
	defer tx.Rollback()
	if st.Dim != tx.dim {
		var any bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM chunks)").Scan(&any); err != nil {
			return fmt.Errorf("set index state: %w", err)
		}
		if any {
			return fmt.Errorf("set index state: dimension %d differs from the indexed %d; use Reset to re-embed: %w",
				st.Dim, tx.dim, memstore.ErrInvalid)
		}
	}
	if err := putState(ctx, tx.Tx, st); err != nil {
		return fmt.Errorf("set index state: %w", err)
	}
	// No chunk changes; a new dimension applies to an empty index, whose
	// rows the next search loads.
	keep := st.Dim == tx.dim
	tx.dim = st.Dim
	if err := i.commit(tx, func(vs *vecStore) bool { return keep }); err != nil {
		return fmt.Errorf("set index state: %w", err)
	}
	return nil
}

// Reset deletes every chunk and records st.
func (i *Index) Reset(ctx context.Context, st memstore.IndexState) error {
	if st.Dim < 0 {
		return fmt.Errorf("reset index: negative dimension %d: %w", st.Dim, memstore.ErrInvalid)
	}
	i.writeMu.Lock()
	defer i.writeMu.Unlock()
	start := time.Now()
	tx, err := i.begin(ctx)
	if err != nil {
		return fmt.Errorf("reset index: %w", err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		"DELETE FROM vectors",
		"DELETE FROM chunks",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("reset index: %w", err)
		}
	}
	if err := putState(ctx, tx.Tx, st); err != nil {
		return fmt.Errorf("reset index: %w", err)
	}
	tx.dim = st.Dim
	tx.reset = true
	if err := i.commit(tx, nil); err != nil {
		return fmt.Errorf("reset index: %w", err)
	}
	i.log.Debug("index reset", logKeyDuration, time.Since(start))
	return nil
}

// putState upserts the single state row.
func putState(ctx context.Context, tx *sql.Tx, st memstore.IndexState) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO state (id, "commit", embedder, dim) VALUES (1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET "commit" = excluded."commit", embedder = excluded.embedder, dim = excluded.dim`,
		st.Commit, st.Embedder, st.Dim)
	return err
}
