package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// openSQLite opens an embedded index in a new file.
func openSQLite(cfg config, log *slog.Logger) (*backend, error) {
	dir, err := os.MkdirTemp(cfg.dir, "indexbench-sqlite-")
	if err != nil {
		return nil, err
	}
	ix, err := sqliteindex.Open(filepath.Join(dir, "index.db"), &sqliteindex.Options{Logger: log})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	b := &backend{name: "sqlite", ix: ix}
	b.close = func() error {
		err := ix.Close()
		if rerr := os.RemoveAll(dir); err == nil {
			err = rerr
		}
		return err
	}
	b.load = func(ctx context.Context, cs []memstore.Chunk) (ingest, error) {
		var in ingest
		emb := embedder.NewBuiltin()
		if err := ix.Reset(ctx, memstore.IndexState{Embedder: emb.ID(), Dim: emb.Dim()}); err != nil {
			return in, err
		}
		fs := files(cs)
		start := time.Now()
		if err := loadBatches(ctx, ix, fs, cfg.batch); err != nil {
			return in, err
		}
		in.add("ReplaceMany (%d-chunk batches, as a rebuild writes): %s", cfg.batch, rate(len(cs), time.Since(start)))
		// The first vector search loads the vectors into memory.
		start = time.Now()
		if _, err := ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Vector: cs[0].Embedding}); err != nil {
			return in, err
		}
		in.add("first vector search (loads vectors): %v", time.Since(start).Round(time.Millisecond))
		n, d, err := incremental(ctx, ix, fs, cfg.incFiles)
		if err != nil {
			return in, err
		}
		in.add("incremental Replace per file: %s", rate(n, d))
		return in, nil
	}
	return b, nil
}

// incremental rewrites the first n files one Replace each, with their
// same chunks, so the corpus is unchanged, and returns chunks written and
// time taken.
func incremental(ctx context.Context, ix memstore.Index, fs [][]memstore.Chunk, n int) (int, time.Duration, error) {
	start := time.Now()
	chunks := 0
	for _, f := range fs[:min(n, len(fs))] {
		if err := ix.Replace(ctx, f[0].Path, f); err != nil {
			return 0, 0, err
		}
		chunks += len(f)
	}
	return chunks, time.Since(start), nil
}
