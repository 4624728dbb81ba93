package pgindex

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/selmem/selmem/memstore"
)

// Names of the two search indexes, dropped and rebuilt around bulk loads.
const (
	textIndexName   = "selmem_chunks_tsv_idx"
	vectorIndexName = "selmem_chunks_embedding_idx"
)

// buildTimeout bounds BuildSearchIndexes: an HNSW build over millions of
// chunks takes many minutes.
const buildTimeout = 2 * time.Hour

// chunkColumns are the columns ReplaceMany copies, in copyRow's order.
var chunkColumns = []string{"path", "seq", "workspace", "scope", "type", "heading", "start_line", "end_line",
	"context", "body", "valid_from", "invalid_at", "expires_at", "source", "confidence", "commit", "embedding"}

// copyRow returns c's values for chunkColumns, cleaned as queueUpsert does.
func copyRow(c *memstore.Chunk) []any {
	return []any{c.Path, c.Seq, c.Workspace, c.Scope, c.Type, cleanText(c.Heading), c.StartLine, c.EndLine,
		cleanText(c.Context), cleanText(c.Text), nullTime(c.ValidFrom), nullTime(c.InvalidAt), nullTime(c.ExpiresAt),
		c.Source, c.Confidence, c.Commit, vectorArg(c.Embedding)}
}

// ReplaceMany is Replace for many paths at once, in one transaction: the
// chunks of each path in files become its complete set (an empty slice
// removes the path). It takes the same per-path locks as Replace, deletes
// the old chunks with one statement and writes the new ones with COPY, so
// it is many times faster than one Replace per path. When a path's chunks
// repeat a Seq, the last one wins, as with Replace. Its deadline is
// Options.QueryTimeout per started 250 chunks (with the HNSW index in
// place an insert costs milliseconds); callers loading a corpus send
// batches of a few thousand chunks, after DropSearchIndexes.
//
// The mirror writes every batch of files through it (memstore.BatchIndex),
// and a full rebuild also drops the search indexes during the load
// (memstore.BulkIndex).
func (ix *Index) ReplaceMany(ctx context.Context, files map[string][]memstore.Chunk) error {
	const op = "ReplaceMany"
	paths := make([]string, 0, len(files))
	n := 0
	for p, chunks := range files {
		if p == "" {
			return invalid(op, "empty path")
		}
		for i := range chunks {
			if chunks[i].Path != p {
				return invalid(op, "chunk %d of %q has path %q", i, p, chunks[i].Path)
			}
		}
		paths = append(paths, p)
		n += len(files[p])
	}
	if len(paths) == 0 {
		return nil
	}
	slices.Sort(paths)
	rows := make([][]any, 0, n)
	for _, p := range paths {
		chunks := files[p]
		last := make(map[int]int, len(chunks)) // seq -> index of its last chunk
		for i := range chunks {
			last[chunks[i].Seq] = i
		}
		for i := range chunks {
			if last[chunks[i].Seq] == i {
				rows = append(rows, copyRow(&chunks[i]))
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout*time.Duration(1+n/250))
	defer cancel()
	err := pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		// Locks are taken in key order, so concurrent ReplaceMany calls
		// whose paths' hashes collide cannot deadlock.
		b := &pgx.Batch{}
		b.Queue(`SELECT pg_advisory_xact_lock($1, h)
			FROM (SELECT DISTINCT hashtext(p) AS h FROM unnest($2::text[]) p) k ORDER BY h`, pathLockClass, paths)
		b.Queue(`DELETE FROM selmem_chunks WHERE path = ANY ($1::text[])`, paths)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		if err := ensureTypes(ctx, tx.Conn()); err != nil {
			return err
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"selmem_chunks"}, chunkColumns, pgx.CopyFromRows(rows))
		return err
	})
	return ix.fail(ctx, op, err)
}

// DropSearchIndexes drops the full-text (GIN) and vector (HNSW) indexes,
// so that a large load (Reset, then ReplaceMany) does not maintain them
// row by row; BuildSearchIndexes recreates them. Searches keep working
// meanwhile, by scanning the table. It is idempotent.
func (ix *Index) DropSearchIndexes(ctx context.Context) error {
	const op = "DropSearchIndexes"
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLockKey); err != nil {
			return err
		}
		for _, name := range []string{textIndexName, vectorIndexName} {
			if _, err := tx.Exec(ctx, `DROP INDEX IF EXISTS `+name); err != nil {
				return err
			}
		}
		return nil
	})
	return ix.fail(ctx, op, err)
}

// BuildSearchIndexes creates the full-text and vector indexes when they are
// missing (after DropSearchIndexes) and refreshes the planner's statistics.
// Building over a loaded table is much faster than maintaining the indexes
// during the load; with Options.BuildMemory large enough to hold the HNSW
// graph, the graph is built in memory. It runs up to two hours, bounded
// also by ctx.
func (ix *Index) BuildSearchIndexes(ctx context.Context) error {
	const op = "BuildSearchIndexes"
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLockKey); err != nil {
			return err
		}
		if ix.opts.BuildMemory != "" {
			if _, err := tx.Exec(ctx, `SELECT set_config('maintenance_work_mem', $1, true)`, ix.opts.BuildMemory); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, createTextIndexSQL); err != nil {
			return err
		}
		dim, err := columnDim(ctx, tx)
		if err != nil {
			return err
		}
		if dim > 0 && dim <= maxHNSWDim {
			if _, err := tx.Exec(ctx, ix.createVectorIndexSQL()); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `ANALYZE selmem_chunks`)
		return err
	})
	return ix.fail(ctx, op, err)
}

const createTextIndexSQL = `CREATE INDEX IF NOT EXISTS ` + textIndexName + ` ON selmem_chunks USING gin (tsv)`

// createVectorIndexSQL is the DDL of the HNSW index with the configured
// build parameters (New fills in their defaults).
func (ix *Index) createVectorIndexSQL() string {
	return fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON selmem_chunks USING hnsw (embedding halfvec_cosine_ops)
		WITH (m = %d, ef_construction = %d)`, vectorIndexName, ix.opts.HNSWM, ix.opts.HNSWEfConstruction)
}
