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
