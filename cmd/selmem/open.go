package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/memstore/pgindex"
	"github.com/selmem/selmem/memstore/sqliteindex"
	"github.com/selmem/selmem/memstore/thesaurus"
	"github.com/selmem/selmem/server"
)

// logger returns the configured slog logger: stderr, or the log file, in
// log.format (text, or JSON one object a line). Never stdout, which the
// stdio transport owns.
func (a *app) logger() (*slog.Logger, io.Closer, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(a.cfg.Log.Level)); err != nil {
		return nil, nil, err
	}
	var w io.Writer = a.stderr
	var closer io.Closer = io.NopCloser(nil)
	if a.cfg.Log.File != "" {
		f, err := os.OpenFile(a.cfg.Log.File, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("log.file: %w", err)
		}
		w, closer = f, f
	}
	opts := &slog.HandlerOptions{Level: level}
	if a.cfg.Log.Format == server.LogFormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts)), closer, nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), closer, nil
}

// openedStore is a store with the resources it was opened with.
type openedStore struct {
	*memstore.Store
	closers []func() error
}

// Close closes the store and then its index and log file.
func (o *openedStore) Close(ctx context.Context) error {
	errs := []error{o.Store.Close(ctx)}
	for i := len(o.closers) - 1; i >= 0; i-- {
		errs = append(errs, o.closers[i]())
	}
	return errors.Join(errs...)
}

// openStore wires the configured embedder and index backend into a Store.
func (a *app) openStore(ctx context.Context) (*openedStore, error) {
	log, logCloser, err := a.logger()
	if err != nil {
		return nil, err
	}
	o := &openedStore{closers: []func() error{logCloser.Close}}
	fail := func(err error) (*openedStore, error) {
		for i := len(o.closers) - 1; i >= 0; i-- {
			_ = o.closers[i]()
		}
		return nil, err
	}
	emb, rank, err := a.embedder()
	if err != nil {
		return fail(err)
	}
	local := func() (memstore.Index, error) {
		i, err := openSQLiteIndex(filepath.Join(a.cfg.Home, "index", "index.db"), log, &rank)
		if err != nil {
			return nil, err
		}
		o.closers = append(o.closers, i.Close)
		return i, nil
	}
	var idx, fallback memstore.Index
	switch a.cfg.Index.Backend {
	case "sqlite":
		if idx, err = local(); err != nil {
			return fail(err)
		}
	case "postgres":
		pool, err := a.openPool(ctx)
		if err != nil {
			return fail(err)
		}
		o.closers = append(o.closers, func() error { pool.Close(); return nil })
		pg := pgindex.Open(pool, &pgindex.Options{Dim: emb.Dim(), EfSearch: a.cfg.Index.EfSearch,
			BuildMemory: a.cfg.Index.BuildMemory, Schema: a.cfg.Index.Schema, Logger: log, Ranking: &rank})
		o.closers = append(o.closers, pg.Close) // its schema's pool, before the caller's
		idx = pg
		// The embedded index is kept as a local mirror that answers while
		// Postgres is unreachable.
		if !a.primaryOnly {
			if fallback, err = local(); err != nil {
				return fail(err)
			}
		}
	}
	lim := gate.DefaultLimits()
	lim.MaxFileBytes = a.cfg.Limits.MaxFileBytes
	lim.MaxWorkspaceBytes = a.cfg.Limits.MaxWorkspaceBytes
	s, err := memstore.Open(ctx, a.cfg.Home, &memstore.Options{
		Limits: lim, Index: idx, Fallback: fallback, Embedder: emb, Logger: log, Author: a.cfg.Author,
		Durability: memstore.Durability(a.cfg.Durability), Observer: a.observer, Progress: a.catchUp,
		Policy: a.cfg.HTTP.Auth.Policy(),
		// WordNet's words: a real word is not taken for a typo of
		// another, and a word the memory does not hold is searched as
		// its synonyms; beside a word the memory holds, also as the
		// words GloVe finds in like contexts.
		Thesaurus:    thesaurus.WordNet{},
		Associations: thesaurus.GloVe{},
		// memstore reads 0 as its default and a negative value as off.
		ProposalThreshold: cmp.Or(a.cfg.ProposalThreshold, -1),
		Remote:            a.remote(idx),
		// A search by the owner of an open draft ranks the draft's files
		// in a throwaway embedded index.
		ScratchIndex: func(dir string) (memstore.Index, error) {
			return openSQLiteIndex(filepath.Join(dir, "scratch.db"), log, &rank)
		},
	})
	if err != nil {
		return fail(err)
	}
	o.Store = s
	return o, nil
}

// remote returns the configured shared git remote, nil for none. With a
// Postgres index, replicas learn of each other's writes through it
// (LISTEN/NOTIFY) besides polling.
func (a *app) remote(idx memstore.Index) *memstore.Remote {
	if a.cfg.Remote.URL == "" {
		return nil
	}
	r := &memstore.Remote{URL: a.cfg.Remote.URL, Branch: a.cfg.Remote.Branch, Poll: a.cfg.Remote.Poll}
	if feed, ok := idx.(memstore.ChangeFeed); ok {
		r.Feed = feed
	}
	return r
}

// embedder returns the configured embedder and the ranking that suits it.
func (a *app) embedder() (memstore.Embedder, memstore.Ranking, error) {
	switch a.cfg.Embedder.Kind {
	case "openai":
		e, err := embedder.NewOpenAI(embedder.OpenAIConfig{
			BaseURL:   a.cfg.Embedder.BaseURL,
			Model:     a.cfg.Embedder.Model,
			Dim:       a.cfg.Embedder.Dim,
			APIKey:    os.Getenv(a.cfg.Embedder.APIKeyEnv),
			BatchSize: a.cfg.Embedder.BatchSize,
			Timeout:   a.cfg.Embedder.Timeout,
		})
		if err != nil {
			return nil, memstore.Ranking{}, fmt.Errorf("embedder: %w", err)
		}
		return e, memstore.ModelRanking(), nil
	default: // builtin; Validate refuses any other kind
		return embedder.NewBuiltin(), memstore.DefaultRanking(), nil
	}
}

// openPool connects to the Postgres index database (lazily: a database that
// is down now does not stop the server).
func (a *app) openPool(ctx context.Context) (*pgxpool.Pool, error) {
	dsn := a.cfg.Index.DSN
	if a.cfg.Index.DSNEnv != "" {
		dsn = os.Getenv(a.cfg.Index.DSNEnv)
		if dsn == "" {
			return nil, fmt.Errorf("index.dsn_env: the environment variable %s is empty", a.cfg.Index.DSNEnv)
		}
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parse error may quote the DSN; name the setting instead.
		return nil, errors.New("index.dsn: not a valid Postgres connection string")
	}
	pcfg.MaxConns = int32(a.cfg.Index.PoolSize)
	pcfg.AfterConnect = pgindex.AfterConnect
	return pgxpool.NewWithConfig(ctx, pcfg)
}

// openSQLiteIndex opens the embedded index, replacing a corrupt one: the
// index is derived from git, so the store rebuilds it.
func openSQLiteIndex(path string, log *slog.Logger, rank *memstore.Ranking) (*sqliteindex.Index, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create index directory: %w", err)
	}
	idx, err := sqliteindex.Open(path, &sqliteindex.Options{Logger: log, Ranking: rank})
	if errors.Is(err, sqliteindex.ErrCorrupt) {
		log.Warn("index is corrupt; rebuilding it from git", "err", err)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
		idx, err = sqliteindex.Open(path, &sqliteindex.Options{Logger: log, Ranking: rank})
	}
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	return idx, nil
}

// withStore opens the store, runs fn and closes the store.
//
// Opening catches the index up with HEAD; on a terminal that shows as a
// progress bar on stderr.
func (a *app) withStore(ctx context.Context, fn func(*openedStore) error) error {
	b := a.newBar("catching up the index", false)
	if b != nil {
		a.catchUp = b.files
	}
	s, err := a.openStore(ctx)
	b.finish()
	a.catchUp = nil
	if err != nil {
		return err
	}
	err = fn(s)
	cerr := s.Close(ctx)
	if err == nil && cerr != nil {
		// What fn wrote is committed and reachable from HEAD; a failure to
		// tidy up afterwards (.git/index, the index's files) must not
		// report it as failed. The next open repairs what is left.
		fmt.Fprintf(a.stderr, "warning: closing the memory: %v\n", cerr)
		return nil
	}
	return errors.Join(err, cerr)
}

// cliWrite is the provenance of a write made from the command line by the
// local user.
func (a *app) cliWrite(tool string) *memstore.WriteOptions {
	return &memstore.WriteOptions{Tool: "cli " + tool, Source: memstore.SourceUserConfirmed, Author: a.cfg.Author}
}
