package pgindex

import (
	"context"
	"sync"

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

	mu sync.Mutex
	ix *Index
}

var (
	_ memstore.BatchIndex = (*Lazy)(nil)
	_ memstore.BulkIndex  = (*Lazy)(nil)
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
	ix, err := New(l.pool, l.opts)
	if err != nil {
		return nil, err
	}
	l.ix = ix
	return ix, nil
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

// Close implements memstore.Index; the pool belongs to the caller.
func (l *Lazy) Close() error { return nil }
