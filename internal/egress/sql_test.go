package egress

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/selmem/selmem/internal/pgtest"
)

func TestCheckQuery(t *testing.T) {
	for _, tc := range []struct {
		name, dialect, q string
		want             string // "" is accepted
	}{
		{"select", DialectSQLite, "SELECT * FROM t", ""},
		{"lower", DialectSQLite, "select 1", ""},
		{"with", DialectPostgres, "WITH x AS (SELECT 1) SELECT * FROM x", ""},
		{"values", DialectPostgres, "VALUES (1)", ""},
		{"paren", DialectSQLite, "(SELECT 1)", ""},
		{"comments", DialectSQLite, "-- hi\n/* there */ SELECT 1;", ""},
		{"trailing semicolon and comment", DialectPostgres, "SELECT 1; -- done", ""},
		{"semicolon in string", DialectSQLite, "SELECT 'a;DELETE FROM t'", ""},
		{"semicolon in ident", DialectSQLite, `SELECT "a;b", [c;d], ` + "`e;f`" + ` FROM t`, ""},
		{"dollar quote", DialectPostgres, "SELECT $x$;DELETE$x$", ""},
		{"escape string", DialectPostgres, `SELECT E'\';DELETE FROM t'`, ""},
		{"nested comment pg", DialectPostgres, "SELECT 1 /* /* */ ; DELETE */", ""},
		{"nested comment sqlite", DialectSQLite, "SELECT 1 /* /* */ ; DELETE FROM t */", "more than one statement"},
		{"two statements", DialectSQLite, "DELETE FROM t; SELECT 1", "more than one statement"},
		{"select then delete", DialectSQLite, "SELECT 1; DELETE FROM t", "more than one statement"},
		{"attach", DialectSQLite, "ATTACH DATABASE '/x' AS x", "ATTACH is not allowed"},
		{"vacuum", DialectSQLite, "VACUUM INTO '/tmp/x.db'", "VACUUM is not allowed"},
		{"pragma", DialectSQLite, "PRAGMA query_only=OFF", "PRAGMA is not allowed"},
		{"update", DialectPostgres, "UPDATE t SET a = 1", "UPDATE is not allowed"},
		{"copy", DialectPostgres, "COPY t TO PROGRAM 'id'", "COPY is not allowed"},
		{"empty", DialectPostgres, " -- nothing\n", "is empty"},
		{"unterminated", DialectSQLite, "SELECT 'a", "unterminated"},
		{"unterminated comment", DialectSQLite, "SELECT 1 /*", "unterminated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckQuery(tc.q, tc.dialect)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("CheckQuery(%q) = %v, want %q", tc.q, err, tc.want)
			}
		})
	}
}

func FuzzCheckQuery(f *testing.F) {
	for _, s := range []string{"SELECT 1", "SELECT 'a;b'; DELETE", "/* /* */ */ SELECT", "$a$ $a$", "E'\\''", "[x", "`x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, d := range []string{DialectSQLite, DialectPostgres} {
			if CheckQuery(q, d) == nil && CheckQuery(q+"; DELETE FROM t", d) == nil && !strings.Contains(q, "--") {
				// Appending a statement after an accepted query must
				// not be accepted unless the query left a string or
				// comment open, which CheckQuery refuses.
				t.Fatalf("%s: %q accepted with a second statement", d, q)
			}
		}
	})
}

// sqliteFixture is a SQLite database with table t of 3 rows inside root,
// and a second database outside it.
func sqliteFixture(t *testing.T) (dbPath, outside string) {
	t.Helper()
	dbPath = filepath.Join(t.TempDir(), "shop.db")
	outside = filepath.Join(t.TempDir(), "index.db")
	for _, p := range []string{dbPath, outside} {
		db, err := sql.Open("sqlite", p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, secret TEXT); INSERT INTO t(secret) VALUES ('a'),('b'),('c')`); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	return dbPath, outside
}

func rowsOf(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSQLite_Attacks runs each attack a model could write as the query of
// a SQLite source inside the data roots. Before package egress each one
// ran: ATTACH read a database outside the roots, ATTACH and VACUUM INTO
// created files outside them, and a second statement emptied the table.
func TestSQLite_Attacks(t *testing.T) {
	dbPath, outside := sqliteFixture(t)
	dir := t.TempDir() // where the attacks try to create files
	created := filepath.Join(dir, "created.db")
	vacuumed := filepath.Join(dir, "vacuum.db")
	ctx := context.Background()
	for _, tc := range []struct{ name, q string }{
		{"attach read", "ATTACH DATABASE '" + outside + "' AS x; SELECT * FROM x.t"},
		{"attach read in one", "SELECT * FROM t WHERE 0; ATTACH DATABASE '" + outside + "' AS x"},
		{"attach create", "ATTACH DATABASE '" + created + "' AS x; CREATE TABLE x.y(a)"},
		{"vacuum into", "VACUUM INTO '" + vacuumed + "'"},
		{"delete then select", "DELETE FROM t; SELECT 1"},
		{"delete cte", "WITH d AS (SELECT 1) DELETE FROM t"},
		{"load extension", "SELECT load_extension('" + filepath.Join(dir, "evil.so") + "')"},
		{"pragma write", "PRAGMA query_only = OFF"},
		{"pragma function write", "SELECT * FROM pragma_journal_mode('delete')"},
		{"pragma user_version", "PRAGMA user_version = 7"},
		{"insert", "INSERT INTO t(secret) VALUES ('x')"},
		{"drop", "DROP TABLE t"},
		{"create temp", "CREATE TEMP TABLE x(a)"},
		{"fts3 tokenizer", "SELECT fts3_tokenizer('simple')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := OpenSQLite(dbPath)
			defer db.Close()
			if err := drain(ctx, db, DialectSQLite, tc.q, 0); err == nil {
				t.Errorf("%s ran", tc.q)
			}
			// The authorizer must stop it even without CheckQuery.
			if rows, err := db.QueryContext(ctx, tc.q); err == nil {
				for rows.Next() {
				}
				if rows.Err() == nil {
					t.Errorf("%s ran on the connection itself", tc.q)
				}
				rows.Close()
			}
		})
	}
	for _, p := range []string{created, vacuumed} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was created", p)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files created in %s: %v", dir, entries)
	}
	if n := rowsOf(t, dbPath); n != 3 {
		t.Errorf("source table has %d rows, want 3", n)
	}
	// Reading still works, pragma table functions included.
	db := OpenSQLite(dbPath)
	defer db.Close()
	rows, err := Query(ctx, db, DialectSQLite, "SELECT t.*, (SELECT count(*) FROM pragma_table_info('t')) FROM t", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 3 || rows.Err() != nil {
		t.Errorf("read %d rows (%v), want 3", n, rows.Err())
	}
}

// drain runs q through Query on db, reads every row and returns the
// first error.
func drain(ctx context.Context, db *sql.DB, dialect, q string, timeout time.Duration) error {
	rows, err := Query(ctx, db, dialect, q, timeout)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// TestSQLite_ValueLimit: a query cannot make a value beyond
// MaxValueBytes, which the process would hold in memory. Without the
// limit each of these succeeds, and group_concat over an endless
// recursive CTE took the process to 1.7 GB in 5 s.
func TestSQLite_ValueLimit(t *testing.T) {
	dbPath, _ := sqliteFixture(t)
	ctx := context.Background()
	over := strconv.Itoa(MaxValueBytes + 1)
	for _, tc := range []struct{ name, q string }{
		{"zeroblob", "SELECT zeroblob(" + over + ")"},
		{"printf", "SELECT printf('%.*c', " + over + ", 'x')"},
		{"group_concat", "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r LIMIT 17) " +
			"SELECT length(group_concat(printf('%.*c', 1048576, 'x'))) FROM r"},
		{"replace", "SELECT replace(hex(zeroblob(" + strconv.Itoa(MaxValueBytes/8) + ")), '0', 'xxxxxxxx')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := OpenSQLite(dbPath)
			defer db.Close()
			if err := drain(ctx, db, DialectSQLite, tc.q, 0); err == nil || !strings.Contains(err.Error(), "too big") {
				t.Errorf("%s: error %v, want string or blob too big", tc.q, err)
			}
		})
	}
	// A value within the limit is read whole.
	db := OpenSQLite(dbPath)
	defer db.Close()
	rows, err := Query(ctx, db, DialectSQLite, "SELECT length(printf('%.*c', "+strconv.Itoa(MaxValueBytes/2)+", 'x'))", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n int
	if !rows.Next() || rows.Scan(&n) != nil || n != MaxValueBytes/2 {
		t.Errorf("length %d (%v), want %d", n, rows.Err(), MaxValueBytes/2)
	}
}

// fakePostgres accepts connections on loopback and records every byte a
// client sends: it asks for a clear-text password, which a client sends in
// a PasswordMessage.
type fakePostgres struct {
	net.Listener
	mu  sync.Mutex
	got []byte
}

func newFakePostgres(t *testing.T) *fakePostgres {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePostgres{Listener: l}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakePostgres) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	read := func(n int) []byte {
		b := make([]byte, n)
		if _, err := io.ReadFull(c, b); err != nil {
			return nil
		}
		f.mu.Lock()
		f.got = append(f.got, b...)
		f.mu.Unlock()
		return b
	}
	for {
		hdr := read(4)
		if hdr == nil {
			return
		}
		body := read(int(binary.BigEndian.Uint32(hdr)) - 4)
		if len(body) >= 4 && binary.BigEndian.Uint32(body) == 80877103 { // SSLRequest
			c.Write([]byte{'N'})
			continue
		}
		break
	}
	// AuthenticationCleartextPassword, then read what comes.
	c.Write([]byte{'R', 0, 0, 0, 8, 0, 0, 0, 3})
	_ = read(1)
	if hdr := read(4); hdr != nil {
		_ = read(int(binary.BigEndian.Uint32(hdr)) - 4)
	}
	c.Write([]byte{'E', 0, 0, 0, 5, 0})
}

func (f *fakePostgres) received() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return string(f.got)
}

// TestPostgresConfig_Ambient: a connection built from a DSN without a
// password does not send the process's PGPASSWORD (nor a ~/.pgpass
// entry) to the host the DSN names. Before package egress the profiler
// opened any DSN with pgx's defaults, which read PGPASSWORD and sent it,
// in clear text, to a listener a model chose.
func TestPostgresConfig_Ambient(t *testing.T) {
	const secret = "ambient-pg-s3cret"
	t.Setenv("PGPASSWORD", secret)
	home := t.TempDir()
	t.Setenv("HOME", home)
	fake := newFakePostgres(t)
	_, port, _ := net.SplitHostPort(fake.Addr().String())
	if err := os.WriteFile(filepath.Join(home, ".pgpass"), []byte("*:*:*:*:"+secret+"-pgpass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dsn := range []string{
		"host=127.0.0.1 port=" + port + " user=postgres dbname=postgres sslmode=disable connect_timeout=5",
		"postgres://postgres@127.0.0.1:" + port + "/postgres?sslmode=disable&connect_timeout=5",
	} {
		cfg, err := PostgresConfig(dsn)
		if err != nil {
			t.Fatalf("PostgresConfig: %v", err)
		}
		if cfg.Password != "" {
			t.Errorf("password taken from the environment")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, err := pgx.ConnectConfig(ctx, cfg)
		cancel()
		if err == nil {
			conn.Close(context.Background())
		}
		if strings.Contains(fake.received(), secret) {
			t.Errorf("%s: the ambient password reached the server", dsn)
		}
		if !strings.Contains(fake.received(), "user") {
			t.Errorf("%s: the fake server saw no startup message; the test proves nothing", dsn)
		}
	}
	// The password a DSN holds is used.
	cfg, err := PostgresConfig("host=127.0.0.1 port=" + port + " user=u password='own pw' sslmode=disable")
	if err != nil || cfg.Password != "own pw" {
		t.Errorf("explicit password: %v, %q", err, cfg.Password)
	}
}

// TestPostgresConfig_Files: keys that make pgx read local files are
// refused before any file is touched; before package egress,
// servicefile=/etc/passwd told whether the file existed.
func TestPostgresConfig_Files(t *testing.T) {
	for _, dsn := range []string{
		"host=127.0.0.1 servicefile=/etc/passwd service=x",
		"host=127.0.0.1 servicefile=/nonexistent service=x",
		"postgres://127.0.0.1/db?servicefile=/etc/passwd&service=x",
		"host=127.0.0.1 passfile=/etc/shadow",
		"service=x",
	} {
		_, err := PostgresConfig(dsn)
		if err == nil || !strings.Contains(err.Error(), "is not supported") {
			t.Errorf("PostgresConfig(%q) = %v, want a refusal", dsn, err)
		}
	}
	if _, err := PostgresConfig("host=x password='unterminated"); err == nil || strings.Contains(err.Error(), "unterminated'") {
		t.Errorf("bad DSN: %v", err)
	}
}

// TestQuery_PostgresReadOnly: a query runs in a read-only transaction, so
// a statement that writes fails, against a real Postgres.
func TestQuery_PostgresReadOnly(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	setup, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close(ctx)
	if _, err := setup.Exec(ctx, `CREATE TABLE t(id int); INSERT INTO t VALUES (1),(2),(3)`); err != nil {
		t.Fatal(err)
	}
	cfg, err := PostgresConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := OpenPostgres(cfg)
	defer db.Close()
	for _, q := range []string{
		"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
		"SELECT set_config('transaction_read_only', 'off', false), * FROM t",
		"SELECT * FROM t; DELETE FROM t",
		"SELECT pg_sleep(5)",
		"SELECT nextval('x')",
		// A row beyond MaxValueBytes would be held whole in memory.
		"SELECT repeat('x', " + strconv.Itoa(MaxValueBytes+1) + ")",
	} {
		if err := drain(ctx, db, DialectPostgres, q, 500*time.Millisecond); err == nil {
			t.Errorf("%s succeeded", q)
		}
	}
	var n int
	if err := setup.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 3 {
		t.Errorf("table has %d rows (%v), want 3", n, err)
	}
	rows, err := Query(ctx, db, DialectPostgres, "SELECT * FROM t", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	n = 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 3 {
		t.Errorf("read %d rows, want 3", n)
	}
	rows, err = Query(ctx, db, DialectPostgres, "SELECT repeat('x', "+strconv.Itoa(MaxValueBytes/2)+")", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var v string
	if !rows.Next() || rows.Scan(&v) != nil || len(v) != MaxValueBytes/2 {
		t.Errorf("read %d bytes (%v), want %d", len(v), rows.Err(), MaxValueBytes/2)
	}
}

// TestSQLite_Timeout: a SQLite query ends with an error once its timeout
// has passed, whether it computes without returning a row or returns rows
// without end; a profile_source query on a database under the data roots
// otherwise ran until its client went away.
func TestSQLite_Timeout(t *testing.T) {
	dbPath, _ := sqliteFixture(t)
	for _, q := range []string{
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c",
	} {
		db := OpenSQLite(dbPath)
		err := drain(context.Background(), db, DialectSQLite, q, 200*time.Millisecond)
		db.Close()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want the deadline exceeded", q, err)
		}
	}
}
