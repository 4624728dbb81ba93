package pgindex

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.up.sql
var migrationFS embed.FS

// extensionLockKey is the advisory lock serialising, across every memory
// on a database, the creation of the vector extension and of schemas
// (prepareSchema). Each memory's own work has keys of its own (lockKey).
const extensionLockKey int64 = 0x73656c6d656d0001 // "selmem" 0001

// migration is one embedded migrations/NNN_name.up.sql file.
type migration struct {
	Version int
	Name    string
	SQL     string
}

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	files, err := fs.Glob(migrationFS, "migrations/*.up.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	seen := map[int]string{}
	for _, f := range files {
		base := strings.TrimSuffix(path.Base(f), ".up.sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNN_name.up.sql", f)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, f, v)
		}
		seen[v] = f
		b, err := migrationFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// Migrate applies pending migrations in order, each recorded in
// selmem_schema_migrations, and creates the embedding column with
// Options.Dim when it does not exist, all in one transaction under an
// advisory lock, so servers starting at once are safe. New calls it; it is
// idempotent.
func (ix *Index) Migrate(ctx context.Context) error {
	const op = "Migrate"
	ms, err := migrations()
	if err != nil {
		return &Error{Op: op, Msg: err.Error(), Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, 12*ix.opts.QueryTimeout)
	defer cancel()
	err = pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
		if err := ix.lock(ctx, tx, "schema"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS selmem_schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT version FROM selmem_schema_migrations`)
		if err != nil {
			return err
		}
		applied, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return err
		}
		done := map[int]bool{}
		for _, v := range applied {
			done[v] = true
		}
		for _, m := range ms {
			if done[m.Version] {
				continue
			}
			// Without arguments pgx uses the simple protocol, which runs
			// every statement of the file.
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %03d_%s: %w", m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO selmem_schema_migrations (version, name) VALUES ($1, $2)`,
				m.Version, m.Name); err != nil {
				return err
			}
			ix.log.Info("pgindex: applied migration", logKeyVersion, m.Version, logKeyName, m.Name)
		}
		cur, typ, err := embeddingColumn(ctx, tx)
		if err != nil {
			return err
		}
		if typ == "vector" {
			// Indexes made before embeddings were stored as halfvec: convert
			// in place, keeping the vectors, so nothing is re-embedded.
			ix.log.Info("pgindex: converting embeddings to halfvec", logKeyDim, cur)
			if err := ix.convertToHalfvec(ctx, tx, cur); err != nil {
				return err
			}
		}
		switch {
		case cur == 0:
			return ix.createEmbedding(ctx, tx, ix.opts.Dim, false)
		case cur != ix.opts.Dim:
			ix.log.Warn("pgindex: embedding column dimension differs from Options.Dim; Reset with the new state recreates it",
				logKeyDim, cur, logKeyWantDim, ix.opts.Dim)
		}
		return nil
	})
	return ix.fail(ctx, op, err)
}

// columnDim returns the dimension of selmem_chunks.embedding, 0 when the
// column does not exist.
func columnDim(ctx context.Context, tx pgx.Tx) (int, error) {
	dim, _, err := embeddingColumn(ctx, tx)
	return dim, err
}

// embeddingColumn returns the dimension and type name ("halfvec", or
// "vector" in indexes made by earlier versions) of selmem_chunks.embedding;
// 0 and "" when the column does not exist.
func embeddingColumn(ctx context.Context, tx pgx.Tx) (int, string, error) {
	var dim int
	var typ string
	err := tx.QueryRow(ctx, `SELECT atttypmod, format_type(atttypid, NULL) FROM pg_attribute
		WHERE attrelid = 'selmem_chunks'::regclass AND attname = 'embedding' AND NOT attisdropped`).Scan(&dim, &typ)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", nil
	}
	return dim, typ, err
}

// convertToHalfvec rewrites a vector(dim) embedding column as halfvec(dim)
// and rebuilds its HNSW index.
func (ix *Index) convertToHalfvec(ctx context.Context, tx pgx.Tx, dim int) error {
	// dim is an int: formatting it into DDL is safe.
	stmts := []string{
		`DROP INDEX IF EXISTS ` + vectorIndexName,
		fmt.Sprintf(`ALTER TABLE selmem_chunks ALTER COLUMN embedding TYPE halfvec(%d) USING embedding::halfvec(%d)`, dim, dim),
	}
	return ix.alterEmbedding(ctx, tx, dim, stmts)
}

// createEmbedding adds the embedding column with dimension dim and its HNSW
// index, dropping an existing column first when replace is set.
//
// Embeddings are stored as halfvec: half the bytes of vector, so a row of
// the built-in embedder (484 dimensions) stays in the table's pages
// instead of TOAST, the
// HNSW graph is half the size, and embedders of up to 4,000 dimensions get
// an index. Rankings lose nothing that matters: half precision keeps about
// three significant digits per component.
func (ix *Index) createEmbedding(ctx context.Context, tx pgx.Tx, dim int, replace bool) error {
	var stmts []string
	if replace {
		stmts = append(stmts,
			`DROP INDEX IF EXISTS `+vectorIndexName,
			`ALTER TABLE selmem_chunks DROP COLUMN IF EXISTS embedding`)
	}
	// dim is an int: formatting it into DDL is safe.
	stmts = append(stmts, fmt.Sprintf(`ALTER TABLE selmem_chunks ADD COLUMN embedding halfvec(%d)`, dim))
	return ix.alterEmbedding(ctx, tx, dim, stmts)
}

// alterEmbedding runs stmts, which leave an embedding column of dimension
// dim without its HNSW index, then creates the index when dim allows one.
func (ix *Index) alterEmbedding(ctx context.Context, tx pgx.Tx, dim int, stmts []string) error {
	if dim <= maxHNSWDim {
		stmts = append(stmts, ix.createVectorIndexSQL())
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
