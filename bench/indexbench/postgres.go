package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/selmem/selmem/internal/pgtest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/pgindex"
)

// openPostgres connects to cfg.dsn, or starts a throwaway cluster, and
// returns a pgindex backend over a fresh schema.
func openPostgres(ctx context.Context, cfg config, log *slog.Logger) (*backend, error) {
	dsn := cfg.dsn
	var cluster *pgtest.Cluster
	if dsn == "" {
		var err error
		cluster, err = pgtest.Launch(&pgtest.LaunchOptions{Logger: log, Settings: []string{
			"shared_buffers = " + cfg.sharedBufs,
			"effective_cache_size = 8GB",
			"max_parallel_maintenance_workers = 2",
		}})
		if err != nil {
			return nil, err
		}
		if dsn, err = cluster.CreateDatabase(ctx, "indexbench"); err != nil {
			cluster.Close()
			return nil, err
		}
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse -dsn: %w", err)
	}
	pcfg.MaxConns = 4
	pcfg.AfterConnect = pgindex.AfterConnect
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	emb := embedder.NewBuiltin()
	opts := pgindex.Options{Dim: emb.Dim(), Logger: log, EfSearch: cfg.efSearch, TextPool: cfg.textPool,
		HNSWM: cfg.hnswM, HNSWEfConstruction: cfg.hnswEfC, BuildMemory: cfg.maintMem, QueryTimeout: 60 * time.Second}
	ix, err := pgindex.New(pool, &opts)
	if err != nil {
		pool.Close()
		if cluster != nil {
			cluster.Close()
		}
		return nil, err
	}
	b := &backend{name: "postgres", ix: ix}
	b.close = func() error {
		ix.Close()
		pool.Close()
		if cluster != nil {
			return cluster.Close()
		}
		return nil
	}
	b.load = func(ctx context.Context, cs []memstore.Chunk) (ingest, error) {
		var in ingest
		if cfg.reuse {
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM selmem_chunks`).Scan(&n); err != nil {
				return in, err
			}
			if n != cfg.chunks {
				return in, fmt.Errorf("-reuse: the database holds %d chunks, the corpus %d", n, cfg.chunks)
			}
			in.add("reused the %d chunks already loaded", n)
			return in, nil
		}
		// Reset recreates the embedding column and its HNSW index with the
		// configured parameters.
		if err := ix.Reset(ctx, memstore.IndexState{Embedder: emb.ID(), Dim: emb.Dim() + 1}); err != nil {
			return in, err
		}
		if err := ix.Reset(ctx, memstore.IndexState{Embedder: emb.ID(), Dim: emb.Dim()}); err != nil {
			return in, err
		}
		start := time.Now()
		if err := ix.DropSearchIndexes(ctx); err != nil {
			return in, err
		}
		fs := files(cs)
		if err := loadBatches(ctx, ix, fs, cfg.batch); err != nil {
			return in, err
		}
		loaded := time.Since(start)
		in.add("ReplaceMany (COPY, %d-chunk batches, no search indexes): %s", cfg.batch, rate(len(cs), loaded))
		t0 := time.Now()
		if err := ix.BuildSearchIndexes(ctx); err != nil {
			return in, err
		}
		in.add("BuildSearchIndexes (postings impact + HNSW, analyze): %v", time.Since(t0).Round(time.Millisecond))
		in.add("bulk total, load + index build: %s", rate(len(cs), time.Since(start)))

		nInc, d, err := incremental(ctx, ix, fs, cfg.incFiles)
		if err != nil {
			return in, err
		}
		in.add("incremental Replace per file, indexes live: %s", rate(nInc, d))
		// The same files again, in one ReplaceMany with indexes live.
		batch := map[string][]memstore.Chunk{}
		for _, f := range fs[:min(cfg.incFiles, len(fs))] {
			batch[f[0].Path] = f
		}
		t0 = time.Now()
		if err := ix.ReplaceMany(ctx, batch); err != nil {
			return in, err
		}
		in.add("incremental ReplaceMany, indexes live: %s", rate(nInc, time.Since(t0)))
		// Vacuum away the rewritten rows, as autovacuum would.
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE selmem_chunks"); err != nil {
			return in, err
		}
		var heap, toast, postings, hnsw string
		if err := pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_relation_size('selmem_chunks')),
			pg_size_pretty(pg_total_relation_size(reltoastrelid)),
			pg_size_pretty(pg_total_relation_size('selmem_postings')),
			pg_size_pretty(pg_relation_size('selmem_chunks_embedding_idx'))
			FROM pg_class WHERE oid = 'selmem_chunks'::regclass`).Scan(&heap, &toast, &postings, &hnsw); err != nil {
			return in, err
		}
		in.add("sizes: heap %s, toast %s, postings with indexes %s, HNSW %s", heap, toast, postings, hnsw)
		return in, nil
	}
	b.explain = ix.ExplainSearch
	b.variant = func(spec string) (memstore.Index, error) {
		k, v, _ := strings.Cut(spec, "=")
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("variant %q: want ef=N, pool=N or scan=N", spec)
		}
		o := opts
		switch k {
		case "ef":
			o.EfSearch = n
		case "pool":
			o.TextPool = n
		case "scan":
			o.MaxScanTuples = n
		default:
			return nil, fmt.Errorf("variant %q: want ef=N, pool=N or scan=N", spec)
		}
		return pgindex.New(pool, &o)
	}
	return b, nil
}
