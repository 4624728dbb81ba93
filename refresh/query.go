package refresh

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver that builds query databases

	"github.com/selmem/selmem/internal/egress"
)

// DataTable is the table a query over an artifact's data reads.
const DataTable = "data"

// QueryLimits bound a query over a snapshot.
type QueryLimits struct {
	MaxRows  int           // rows returned; default 200
	MaxCells int           // rows × columns returned; default 5,000
	Timeout  time.Duration // default 5s
}

func (l QueryLimits) withDefaults() QueryLimits {
	if l.MaxRows <= 0 {
		l.MaxRows = 200
	}
	if l.MaxCells <= 0 {
		l.MaxCells = 5000
	}
	if l.Timeout <= 0 {
		l.Timeout = 5 * time.Second
	}
	return l
}

// QueryResult is the answer to a query over a snapshot.
type QueryResult struct {
	Columns   []string `json:"columns"`
	Rows      [][]any  `json:"rows"`
	Truncated bool     `json:"truncated"` // more rows than the limits allowed
	Snapshot  string   `json:"snapshot"`  // the snapshot's SHA-256
}

// Query runs one read-only SELECT over an artifact's current data, a
// table named data with the snapshot's columns. The snapshot is loaded
// into a SQLite database beside it once, opened read-only and immutable
// with the outbound policy's SQLite guards (one statement, SELECT only, no
// ATTACH, no pragma that sets anything).
func (r *Refresher) Query(ctx context.Context, ws, artifact, query string, lim QueryLimits) (QueryResult, error) {
	lim = lim.withDefaults()
	b, err := r.ReadBinding(ctx, ws, artifact)
	if err != nil {
		return QueryResult{}, err
	}
	if b.Snapshot == nil {
		return QueryResult{}, notFound(fmt.Sprintf("artifact %s/%s has no data yet.", ws, artifact), "Refresh it first with refresh_artifact.")
	}
	if err := egress.CheckQuery(query, egress.DialectSQLite); err != nil {
		return QueryResult{}, invalid(strings.TrimSuffix(err.Error(), ".")+".", "Give one SELECT over the table data, e.g. SELECT region, sum(amount) FROM data GROUP BY region.")
	}
	dbPath, err := r.snaps.queryDB(ctx, ws, artifact, b.Snapshot.SHA256)
	if err != nil {
		return QueryResult{}, err
	}
	db := egress.OpenSQLite(dbPath)
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	rows, err := egress.Query(ctx, db, egress.DialectSQLite, query, lim.Timeout)
	if err != nil {
		return QueryResult{}, queryError(ctx, err, lim)
	}
	defer rows.Close()
	res := QueryResult{Snapshot: b.Snapshot.SHA256, Rows: [][]any{}}
	if res.Columns, err = rows.Columns(); err != nil {
		return QueryResult{}, err
	}
	maxRows := min(lim.MaxRows, max(1, lim.MaxCells/max(1, len(res.Columns))))
	for rows.Next() {
		if len(res.Rows) == maxRows {
			res.Truncated = true
			break
		}
		vals := make([]any, len(res.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return QueryResult{}, queryError(ctx, err, lim)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return QueryResult{}, queryError(ctx, err, lim)
	}
	return res, nil
}

// queryError turns a failed query into a message for the caller: the
// database's own message names the SQL at fault and holds no host path.
func queryError(ctx context.Context, err error, lim QueryLimits) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return invalid(fmt.Sprintf("the query ran longer than %s.", lim.Timeout), "Aggregate or filter more, or add a LIMIT.")
	}
	msg := err.Error()
	if i := strings.Index(msg, "): "); i >= 0 && strings.HasPrefix(msg, "SQL logic error") {
		msg = msg[i+3:]
	}
	return invalid("the query failed: "+strings.TrimSuffix(msg, ".")+".", "The table is named data; read its columns from the artifact's binding.")
}

func (s *Snapshots) queryFile(sha string) string {
	return filepath.Join(s.dir, "objects", sha[:2], sha+".sqlite")
}

// queryDB returns the SQLite database of snapshot sha as the data of
// artifact ws/artifact, building it on first use: only of a snapshot the
// artifact retains (see Bound).
func (s *Snapshots) queryDB(ctx context.Context, ws, artifact, sha string) (string, error) {
	if err := s.retained(ws, artifact, sha); err != nil {
		return "", err
	}
	p := s.queryFile(sha)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	data, err := s.Get(sha)
	if err != nil {
		return "", err
	}
	var snap struct {
		Columns []Column         `json:"columns"`
		Records []map[string]any `json:"records"`
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		return "", fmt.Errorf("refresh: snapshot %s is damaged: %w", sha[:12], err)
	}
	tmp := p + fmt.Sprintf(".%d.tmp", os.Getpid())
	os.Remove(tmp)
	if err := buildQueryDB(ctx, tmp, snap.Columns, snap.Records); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return p, nil
}

func buildQueryDB(ctx context.Context, path string, cols []Column, records []map[string]any) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	defs := make([]string, len(cols))
	marks := make([]string, len(cols))
	for i, c := range cols {
		affinity := "TEXT"
		switch c.Type {
		case TypeInteger, TypeBoolean:
			affinity = "INTEGER"
		case TypeNumber:
			affinity = "REAL"
		}
		defs[i] = quoteIdent(c.Name) + " " + affinity
		marks[i] = "?"
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "CREATE TABLE "+DataTable+" ("+strings.Join(defs, ", ")+")"); err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+DataTable+" VALUES ("+strings.Join(marks, ", ")+")")
	if err != nil {
		return err
	}
	defer stmt.Close()
	args := make([]any, len(cols))
	for _, rec := range records {
		for i, c := range cols {
			v := rec[c.Name]
			if b, ok := v.(bool); ok {
				v = map[bool]int{false: 0, true: 1}[b]
			}
			args[i] = v
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// quoteIdent quotes a SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
