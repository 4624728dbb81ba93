package pgindex

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// Names of the search indexes, dropped and rebuilt around bulk loads.
const (
	textIndexName   = "selmem_postings_impact_idx"
	zoneIndexName   = "selmem_postings_zone_idx"
	vectorIndexName = "selmem_chunks_embedding_idx"
)

// buildTimeout bounds BuildSearchIndexes: an HNSW build over millions of
// chunks takes many minutes.
const buildTimeout = 2 * time.Hour

// chunkColumns are the columns ReplaceMany copies, in copyRow's order.
var chunkColumns = []string{"path", "seq", "workspace", "scope", "type", "heading", "start_line", "end_line",
	"context", "body", "valid_from", "invalid_at", "expires_at", "source", "confidence", "commit", "embedding",
	"len_heading", "len_path", "len_text", "zone"}

// copyRow returns c's values for chunkColumns, text cleaned, with the field
// lengths of its analysis a.
func copyRow(c *memstore.Chunk, a *analysis) []any {
	return []any{c.Path, c.Seq, c.Workspace, c.Scope, c.Type, cleanText(c.Heading), c.StartLine, c.EndLine,
		cleanText(c.Context), cleanText(c.Text), nullTime(c.ValidFrom), nullTime(c.InvalidAt), nullTime(c.ExpiresAt),
		c.Source, c.Confidence, c.Commit, vectorArg(c.Embedding), a.lens[0], a.lens[1], a.lens[2], access.ZoneOf(c.Path)}
}

// ReplaceMany is Replace for many paths at once, in one transaction: the
// chunks of each path in files become its complete set (an empty slice
// removes the path). It takes the statistics lock as every write does,
// deletes the old chunks with one statement and writes the new ones and
// their postings with COPY, so
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
	return ix.replace(ctx, "ReplaceMany", files)
}

// replace is ReplaceMany, reporting errors as op.
func (ix *Index) replace(ctx context.Context, op string, files map[string][]memstore.Chunk) error {
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
	kept := make([]*memstore.Chunk, 0, n)
	as := make([]analysis, 0, n)
	for _, p := range paths {
		chunks := files[p]
		last := make(map[int]int, len(chunks)) // seq -> index of its last chunk
		for i := range chunks {
			last[chunks[i].Seq] = i
		}
		for i := range chunks {
			if last[chunks[i].Seq] == i {
				as = append(as, analyse(&chunks[i]))
				kept = append(kept, &chunks[i])
				rows = append(rows, copyRow(&chunks[i], &as[len(as)-1]))
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout*time.Duration(1+n/250))
	defer cancel()
	err := pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		if err := ix.lock(ctx, tx, "stats"); err != nil {
			return err
		}
		if err := remove(ctx, tx, "c.path = ANY ($1::text[])", paths); err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		if err := ensureTypes(ctx, tx.Conn()); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"selmem_chunks"}, chunkColumns, pgx.CopyFromRows(rows)); err != nil {
			return err
		}
		s, err := readStats(ctx, tx)
		if err != nil {
			return err
		}
		// readStats saw the removal; the insert is not counted yet.
		return ix.addPostings(ctx, tx, paths, kept, as, s)
	})
	return ix.fail(ctx, op, err)
}

func (ix *Index) DropSearchIndexes(ctx context.Context) error {
	const op = "DropSearchIndexes"
	ctx, cancel := context.WithTimeout(ctx, ix.opts.QueryTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		if err := ix.lock(ctx, tx, "schema"); err != nil {
			return err
		}
		for _, name := range []string{textIndexName, zoneIndexName, vectorIndexName} {
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
		if err := ix.lock(ctx, tx, "schema"); err != nil {
			return err
		}
		if ix.opts.BuildMemory != "" {
			if _, err := tx.Exec(ctx, `SELECT set_config('maintenance_work_mem', $1, true)`, ix.opts.BuildMemory); err != nil {
				return err
			}
		}
		for _, ddl := range []string{createTextIndexSQL, createZoneIndexSQL} {
			if _, err := tx.Exec(ctx, ddl); err != nil {
				return err
			}
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
		_, err = tx.Exec(ctx, `ANALYZE selmem_chunks, selmem_postings, selmem_terms, selmem_words`)
		return err
	})
	return ix.fail(ctx, op, err)
}

const (
	createTextIndexSQL = `CREATE INDEX IF NOT EXISTS ` + textIndexName + ` ON selmem_postings (term, impact DESC, chunk_id)`
	createZoneIndexSQL = `CREATE INDEX IF NOT EXISTS ` + zoneIndexName + ` ON selmem_postings (zone, term, impact DESC, chunk_id)`
)

// createVectorIndexSQL is the DDL of the HNSW index with the configured
// build parameters (New fills in their defaults).
func (ix *Index) createVectorIndexSQL() string {
	return fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON selmem_chunks USING hnsw (embedding halfvec_cosine_ops)
		WITH (m = %d, ef_construction = %d)`, vectorIndexName, ix.opts.HNSWM, ix.opts.HNSWEfConstruction)
}
