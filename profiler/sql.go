package profiler

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/jackc/pgx/v5/stdlib" // registers driver "pgx"
	_ "modernc.org/sqlite"             // registers driver "sqlite"
)

// SQLSource runs a query and streams its rows. Either DB is set (the
// caller owns it) or Driver ("postgres"/"pgx" or "sqlite") and DSN.
type SQLSource struct {
	DB     *sql.DB
	Driver string
	DSN    string
	Query  string
	Name   string
}

// Open implements Source.
func (s SQLSource) Open(ctx context.Context) (RecordReader, error) {
	db := s.DB
	var owned *sql.DB
	if db == nil {
		drv := s.Driver
		switch drv {
		case "postgres", "postgresql", "pg":
			drv = "pgx"
		case "sqlite3":
			drv = "sqlite"
		}
		if drv != "pgx" && drv != "sqlite" {
			return nil, fmt.Errorf("profiler: unknown SQL driver %q; use postgres or sqlite", s.Driver)
		}
		var err error
		db, err = sql.Open(drv, s.DSN)
		if err != nil {
			return nil, fmt.Errorf("profiler: opening database: %s", redact(err, s.DSN))
		}
		owned = db
	}
	rows, err := db.QueryContext(ctx, s.Query)
	if err != nil {
		if owned != nil {
			owned.Close()
		}
		return nil, fmt.Errorf("profiler: query failed: %s", redact(err, s.DSN))
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
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
	return &sqlReader{baseReader: baseReader{name: name, format: "sql", closer: dbCloser{owned}}, rows: rows, dsn: s.DSN,
		schema: arrow.NewSchema(fields, nil)}, nil
}

type dbCloser struct{ db *sql.DB }

func (d dbCloser) Close() error {
	if d.db != nil {
		return d.db.Close()
	}
	return nil
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
	rows   *sql.Rows
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
