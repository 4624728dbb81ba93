package pgindex

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ServerInfo is what Probe learnt of the database.
type ServerInfo struct {
	Version string // server_version, e.g. "15.8"
	// Vector is the installed pgvector extension's version; "" when the
	// extension is not installed in this database.
	Vector string
	// Available is the pgvector version the server could install
	// (CREATE EXTENSION vector); "" when the server has none.
	Available string
}

// Probe connects to the database and reads its version and pgvector's,
// for selmem doctor. It changes nothing. An unreachable database returns
// the connection error.
func Probe(ctx context.Context, pool *pgxpool.Pool) (ServerInfo, error) {
	var info ServerInfo
	if err := pool.QueryRow(ctx, `SHOW server_version`).Scan(&info.Version); err != nil {
		return info, err
	}
	err := pool.QueryRow(ctx, `SELECT extversion FROM pg_extension WHERE extname = 'vector'`).Scan(&info.Vector)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return info, err
	}
	var avail *string
	err = pool.QueryRow(ctx, `SELECT default_version FROM pg_available_extensions WHERE name = 'vector'`).Scan(&avail)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return info, err
	}
	if avail != nil {
		info.Available = *avail
	}
	return info, nil
}

// Namespace is what Inspect learnt of a memory's schema and its
// neighbours in the database.
type Namespace struct {
	Schema string // the memory's schema
	Exists bool   // the schema holds an index (false before first use)
	// Legacy lists selmem tables left in public by versions before
	// per-memory schemas; nothing uses them once the memory has a schema of
	// its own. Empty when Schema is public.
	Legacy []string
	// Others lists the schemas of other memories sharing the database.
	Others []string
}

// Inspect reports on schema, for selmem doctor. It changes nothing.
func Inspect(ctx context.Context, pool *pgxpool.Pool, schema string) (Namespace, error) {
	ns := Namespace{Schema: schema}
	const stateTable = `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relname = 'selmem_index_state' AND c.relkind = 'r'`
	rows, err := pool.Query(ctx, stateTable+` ORDER BY 1`)
	if err != nil {
		return ns, err
	}
	schemas, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return ns, err
	}
	for _, s := range schemas {
		switch s {
		case schema:
			ns.Exists = true
		case publicSchema:
		default:
			ns.Others = append(ns.Others, s)
		}
	}
	if schema == publicSchema {
		return ns, nil
	}
	rows, err = pool.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname LIKE 'selmem\_%' ORDER BY 1`, publicSchema)
	if err != nil {
		return ns, err
	}
	ns.Legacy, err = pgx.CollectRows(rows, pgx.RowTo[string])
	return ns, err
}
