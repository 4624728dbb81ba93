package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestDSN_FreshDatabaseWithVector(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 3 {
		conn := connect(t, DSN(t))
		var db, ext string
		err := conn.QueryRow(context.Background(),
			"SELECT current_database(), extversion FROM pg_extension WHERE extname = 'vector'").Scan(&db, &ext)
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		if seen[db] {
			t.Errorf("database %s handed out twice", db)
		}
		seen[db] = true
		if ext == "" {
			t.Errorf("vector extension missing in %s", db)
		}
	}
}

func TestCluster_Settings(t *testing.T) {
	t.Parallel()
	conn := connect(t, DSN(t))
	tests := []struct{ name, want string }{
		{"fsync", "off"},
		{"listen_addresses", "127.0.0.1"},
		{"server_encoding", "UTF8"},
		{"lc_collate", "C"},
	}
	for _, tt := range tests {
		var got string
		if err := conn.QueryRow(context.Background(), "SELECT current_setting($1)", tt.name).Scan(&got); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCluster_StopRestart(t *testing.T) {
	t.Parallel()
	c := NewCluster(t)
	dsn := c.NewDatabase(t)
	ctx := context.Background()
	conn := connect(t, dsn)
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	c.Stop(t)
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(cctx, dsn); err == nil {
		conn.Close(ctx)
		t.Fatal("connect succeeded while the cluster was stopped")
	}

	c.Restart(t)
	var n int
	if err := connect(t, dsn).QueryRow(ctx, "SELECT n FROM kept").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if got, want := n, 42; got != want {
		t.Errorf("n = %d, want %d", got, want)
	}
	if _, err := os.Stat(c.LogPath()); err != nil {
		t.Errorf("server log: %v", err)
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := tail([]byte(tt.in), tt.n); got != tt.want {
			t.Errorf("tail(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// recordingTB records whether fail skipped or failed, without stopping.
type recordingTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}

func TestFail_SkipsUnlessCI(t *testing.T) {
	tests := []struct {
		name     string
		ci       string
		err      error
		wantSkip bool
	}{
		{"missing pgvector skips", "", fmt.Errorf("%w: pgvector is not installed", ErrUnavailable), true},
		{"missing pgvector fails under CI", "true", fmt.Errorf("%w: pgvector is not installed", ErrUnavailable), false},
		{"broken cluster fails", "", errors.New("initdb: boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			r := &recordingTB{TB: t}
			fail(r, tt.err)
			if r.skipped != tt.wantSkip || r.failed == tt.wantSkip {
				t.Errorf("skipped=%v failed=%v, want skipped=%v", r.skipped, r.failed, tt.wantSkip)
			}
			if errors.Is(tt.err, ErrUnavailable) && !strings.Contains(r.msg, "scripts/install-pgvector.sh") {
				t.Errorf("message %q does not say how to enable the tests", r.msg)
			}
		})
	}
}
