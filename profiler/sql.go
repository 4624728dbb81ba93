package profiler

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers driver "pgx"

	"github.com/selmem/selmem/internal/egress"
)

// DefaultStatementTimeout bounds a query of a SQLSource without Timeout.
const DefaultStatementTimeout = 10 * time.Minute

// SQLSource runs one read-only query (a SELECT, WITH … SELECT or VALUES)
// and streams its rows. SQLite databases are opened read-only and
// immutable, behind an authorizer that allows reading only; Postgres
// queries run in a READ ONLY transaction (see package egress).
type SQLSource struct {
	// Driver is "postgres" or "sqlite".
	Driver string
	// DSN is, for postgres, a connection string read as libpq reads it
	// (PG* environment variables and ~/.pgpass apply): the command line's
	// mode, where the local user is the principal. For sqlite it is the
	// database file's path.
	DSN string
	// Postgres, instead of DSN, is a configuration built by package
	// egress from a configured connection.
	Postgres *pgx.ConnConfig
	Query    string
	Name     string
	// Timeout bounds the query: Postgres' statement_timeout, or for
	// SQLite the time from its start until its last row is read; 0 is
	// DefaultStatementTimeout.
	Timeout time.Duration
}

// Open implements Source.
func (s SQLSource) Open(ctx context.Context) (RecordReader, error) {
	var (
		db      *sql.DB
		dialect string
	)
	switch s.Driver {
	case "postgres", "postgresql", "pg", "pgx":
		dialect = egress.DialectPostgres
		if s.Postgres != nil {
			db = egress.OpenPostgres(s.Postgres)
		} else {
			var err error
			if db, err = sql.Open("pgx", s.DSN); err != nil {
				return nil, fmt.Errorf("profiler: opening database: %s", redact(err, s.DSN))
			}
		}
	case "sqlite", "sqlite3":
		dialect = egress.DialectSQLite
		db = egress.OpenSQLite(s.DSN)
	default:
		return nil, fmt.Errorf("profiler: unknown SQL driver %q; use postgres or sqlite", s.Driver)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultStatementTimeout
	}
	rows, err := egress.Query(ctx, db, dialect, s.Query, timeout)
	if err != nil {
		db.Close()
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) {
			// It names the host, port and user; say only that it failed.
			return nil, errors.New("profiler: connecting to the database failed; check the connection's DSN and that the server is up")
		}
		return nil, fmt.Errorf("profiler: query failed: %s", redact(err, s.DSN))
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		db.Close()
		return nil, fmt.Errorf("profiler: %s", redact(err, s.DSN))
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	fields2 := uniqueNames(cols)
	for i := range fields {
		fields[i].Name = fields2[i]
	}
	name := s.Name
	if name == "" {
		name = "query"
	}
	return &sqlReader{baseReader: baseReader{name: name, format: "sql", closer: db}, rows: rows, dsn: s.DSN,
		schema: arrow.NewSchema(fields, nil)}, nil
}

// redact removes the DSN and any password in it from an error message.
func redact(err error, dsn string) string {
	msg := err.Error()
	if dsn == "" {
		return msg
	}
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "***")
		}
	}
	for _, kv := range strings.Fields(dsn) {
		if strings.HasPrefix(strings.ToLower(kv), "password=") {
			if p := kv[len("password="):]; p != "" {
				msg = strings.ReplaceAll(msg, p, "***")
			}
		}
	}
	return strings.ReplaceAll(msg, dsn, "<dsn>")
}

type sqlReader struct {
	baseReader
	rows   *egress.Rows
	dsn    string
	schema *arrow.Schema
	rec    arrow.RecordBatch
	err    error
	done   bool
}

func sqlString(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case []byte:
		return string(x), true
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02"), true
		}
		return x.UTC().Format(time.RFC3339Nano), true
	}
	return fmt.Sprint(v), true
}

func (r *sqlReader) Next() bool {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	if r.done || r.err != nil {
		return false
	}
	n := len(r.schema.Fields())
	bs := make([]*array.StringBuilder, n)
	for i := range bs {
		bs[i] = array.NewStringBuilder(memory.DefaultAllocator)
	}
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rows := 0
	for rows < 8192 {
		if !r.rows.Next() {
			r.done = true
			if err := r.rows.Err(); err != nil {
				r.err = fmt.Errorf("profiler: reading rows: %s", redact(err, r.dsn))
			}
			break
		}
		if err := r.rows.Scan(ptrs...); err != nil {
			r.err = fmt.Errorf("profiler: reading rows: %s", redact(err, r.dsn))
			break
		}
		for i, v := range vals {
			if s, ok := sqlString(v); ok {
				bs[i].Append(s)
			} else {
				bs[i].AppendNull()
			}
		}
		rows++
	}
	cols := make([]arrow.Array, n)
	for i, b := range bs {
		cols[i] = b.NewArray()
		b.Release()
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	if rows == 0 || r.err != nil {
		return false
	}
	r.rec = array.NewRecordBatch(r.schema, cols, int64(rows))
	return true
}

func (r *sqlReader) RecordBatch() arrow.RecordBatch { return r.rec }
func (r *sqlReader) Err() error                     { return r.err }
func (r *sqlReader) Info() ReaderInfo               { return r.info(nil) }
func (r *sqlReader) Release() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	r.rows.Close()
	r.close()
}

var (
	_ Source       = SQLSource{}
	_ RecordReader = (*sqlReader)(nil)
)
