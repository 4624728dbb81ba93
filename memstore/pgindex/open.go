package pgindex

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/selmem/selmem/memstore"
)

// Lazy is an Index that connects on first use: it runs New (migrations,
// embedding column) when a method is first called, and again on later calls
// for as long as that fails. A server can therefore start while Postgres is
// down; its calls fail with ErrUnavailable until the database is back.
type Lazy struct {
	pool *pgxpool.Pool
	opts *Options

	mu     sync.Mutex
	ix     *Index
	memory string // bound with BindMemory
}

var (
	_ memstore.BatchIndex   = (*Lazy)(nil)
	_ memstore.BulkIndex    = (*Lazy)(nil)
	_ memstore.MemoryBinder = (*Lazy)(nil)
	_ memstore.SharedIndex  = (*Lazy)(nil)
	_ memstore.ChangeFeed   = (*Lazy)(nil)
)

// Open returns a Lazy index over pool, which the caller owns and closes.
func Open(pool *pgxpool.Pool, opts *Options) *Lazy {
	return &Lazy{pool: pool, opts: opts}
}

// index returns the ready Index, preparing it if needed.
func (l *Lazy) index() (*Index, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix != nil {
		return l.ix, nil
	}
	var o Options
	if l.opts != nil {
		o = *l.opts
	}
	schema, err := l.schemaLocked()
	if err != nil {
		return nil, invalid("New", "%v", err)
	}
	if schema != publicSchema || o.Schema != "" {
		o.Schema = schema
	}
	ix, err := openIndex(l.pool, &o, l.memory)
	if err != nil {
		return nil, err
	}
	l.ix = ix
	return ix, nil
}

// schemaLocked returns the schema the index uses: Options.Schema, the
// bound memory's, or public. l.mu is held.
func (l *Lazy) schemaLocked() (string, error) {
	switch {
	case l.opts != nil && l.opts.Schema != "":
		return l.opts.Schema, CheckSchema(l.opts.Schema)
	case l.memory != "":
		return SchemaFor(l.memory)
	}
	return publicSchema, nil
}

// Schema returns the Postgres schema holding the index: Options.Schema,
// the bound memory's (SchemaFor), or public when neither. It does not
// connect.
func (l *Lazy) Schema() (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.schemaLocked()
}

// BindMemory implements memstore.MemoryBinder: the index will live in the
// memory's schema, unless Options.Schema names one. It does not connect
// (an index already connected moves, as Index.BindMemory does), and refuses
// a schema name the memory id or Options.Schema cannot give.
func (l *Lazy) BindMemory(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix != nil {
		return l.ix.BindMemory(id)
	}
	switch {
	case id == "":
		return invalid("BindMemory", "empty memory id")
	case l.memory != "" && l.memory != id:
		return invalid("BindMemory", "the index belongs to memory %s, not %s", l.memory, id)
	}
	prev := l.memory
	l.memory = id
	if _, err := l.schemaLocked(); err != nil {
		l.memory = prev
		return invalid("BindMemory", "%v", err)
	}
	return nil
}

// channel returns the schema, the query timeout and the logger, for
// Exclusive, Publish and Subscribe, which need no migrated index.
func (l *Lazy) channel(op string) (string, time.Duration, *slog.Logger, error) {
	schema, err := l.Schema()
	if err != nil {
		return "", 0, nil, invalid(op, "%v", err)
	}
	timeout, log := DefaultQueryTimeout, slog.New(slog.DiscardHandler)
	if l.opts != nil && l.opts.QueryTimeout > 0 {
		timeout = l.opts.QueryTimeout
	}
	if l.opts != nil && l.opts.Logger != nil {
		log = l.opts.Logger
	}
	return schema, timeout, log, nil
}

// Exclusive implements memstore.SharedIndex, as Index.Exclusive does.
func (l *Lazy) Exclusive(ctx context.Context, fn func(ctx context.Context) error) error {
	schema, timeout, _, err := l.channel("Exclusive")
	if err != nil {
		return err
	}
	return exclusive(ctx, l.pool, schema, timeout, fn)
}

// Publish implements memstore.ChangeFeed, as Index.Publish does.
func (l *Lazy) Publish(ctx context.Context, commit string) error {
	schema, timeout, _, err := l.channel("Publish")
	if err != nil {
		return err
	}
	return publish(ctx, l.pool, schema, timeout, commit)
}

// Subscribe implements memstore.ChangeFeed, as Index.Subscribe does; it
// runs while the database is down, and listens once it is back.
func (l *Lazy) Subscribe(ctx context.Context, fn func(commit string)) error {
	schema, _, log, err := l.channel("Subscribe")
	if err != nil {
		return err
	}
	return subscribe(ctx, l.pool, schema, log, fn)
}

// Replace implements memstore.Index.
func (l *Lazy) Replace(ctx context.Context, path string, chunks []memstore.Chunk) error {
	ix, err := l.index()
	if err != nil {
		return err
	}
	return ix.Replace(ctx, path, chunks)
}

// DeletePath implements memstore.Index.
func (l *Lazy) DeletePath(ctx context.Context, path string) error {
	ix, err := l.index()
	if err != nil {
		return err
	}
	return ix.DeletePath(ctx, path)
}

// Search implements memstore.Index.
func (l *Lazy) Search(ctx context.Context, q memstore.Query) ([]memstore.Hit, error) {
	ix, err := l.index()
	if err != nil {
		return nil, err
	}
	return ix.Search(ctx, q)
}

// State implements memstore.Index.
func (l *Lazy) State(ctx context.Context) (memstore.IndexState, error) {
	ix, err := l.index()
	if err != nil {
		return memstore.IndexState{}, err
	}
	return ix.State(ctx)
}

// SetState implements memstore.Index.
func (l *Lazy) SetState(ctx context.Context, st memstore.IndexState) error {
	ix, err := l.index()
	if err != nil {
		return err
	}
	return ix.SetState(ctx, st)
}

// Reset implements memstore.Index.
func (l *Lazy) Reset(ctx context.Context, st memstore.IndexState) error {
	ix, err := l.index()
	if err != nil {
		return err
	}
	return ix.Reset(ctx, st)
}

// ReplaceMany implements memstore.BatchIndex.
func (l *Lazy) ReplaceMany(ctx context.Context, files map[string][]memstore.Chunk) error {
	ix, err := l.index()
	if err != nil {
		return err
	}
	return ix.ReplaceMany(ctx, files)
}

// DropSearchIndexes implements memstore.BulkIndex.
func (l *Lazy) DropSearchIndexes(ctx context.Context) error {
	ix, err := l.index()
	if err != nil {
		return err
	}
	return ix.DropSearchIndexes(ctx)
}

// BuildSearchIndexes implements memstore.BulkIndex.
func (l *Lazy) BuildSearchIndexes(ctx context.Context) error {
	ix, err := l.index()
	if err != nil {
		return err
	}
	return ix.BuildSearchIndexes(ctx)
}

// Close implements memstore.Index: it closes the pool the index keeps for
// its schema; the caller's pool stays open.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix == nil {
		return nil
	}
	err := l.ix.Close()
	l.ix = nil
	return err
}
