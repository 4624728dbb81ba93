package sqliteindex

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/selmem/selmem/memstore"
)

// Inspection is an index file opened read-only, for a look that must
// change nothing in it, not even the upgrade Open gives a file an older
// version wrote (selmem doctor and status).
type Inspection struct{ db *sql.DB }

// Inspect opens the index file at path read-only. A missing file, or one
// that is not an index of this schema version, is an error (wrapping
// ErrCorrupt for the latter).
func Inspect(ctx context.Context, path string) (*Inspection, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("inspect index %q: path must be non-empty and free of '?' and '#': %w", path, memstore.ErrInvalid)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, fmt.Errorf("inspect index %s: %w", path, err)
	}
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		db.Close()
		return nil, fmt.Errorf("inspect index %s: %w", path, classify(err))
	}
	if version != schemaVersion {
		db.Close()
		return nil, fmt.Errorf("inspect index %s: schema version %d, this build reads %d: %w", path, version, schemaVersion, ErrCorrupt)
	}
	return &Inspection{db: db}, nil
}

// State is the state the index file records.
func (in *Inspection) State(ctx context.Context) (memstore.IndexState, error) {
	return readState(ctx, in.db)
}

// Close closes the file.
func (in *Inspection) Close() error { return in.db.Close() }
