package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/selmem/selmem/internal/pgtest"
	"github.com/selmem/selmem/memstore"
)

// doctorHome is a demo memory whose embedded index mirrors HEAD.
func doctorHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	if code, _, stderr := cli(t, home, "", "init", "--demo"); code != exitOK {
		t.Fatalf("init --demo: exit %d: %s", code, stderr)
	}
	return home
}

// commitWithoutIndex commits a note through a store opened without an
// index, leaving the embedded index one commit behind.
func commitWithoutIndex(t *testing.T, home string) {
	t.Helper()
	ctx := context.Background()
	s, err := memstore.Open(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "/memories/notes/behind.md", "# Written without the index\n", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// doctorLine returns the report's line for check, failing when it is
// missing.
func doctorLine(t *testing.T, stdout, check string) string {
	t.Helper()
	for _, l := range strings.Split(stdout, "\n") {
		if len(l) > 6 && strings.HasPrefix(l[6:], check+" ") {
			return l
		}
	}
	t.Fatalf("no %q line in:\n%s", check, stdout)
	return ""
}

func TestCLI_DoctorHealthy(t *testing.T) {
	home := doctorHome(t)
	code, stdout, stderr := cli(t, home, "", "doctor")
	if code != exitOK || !strings.Contains(stdout, "All checks passed.") {
		t.Fatalf("doctor: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, c := range []string{"configuration", "repository", "embedder", "index (embedded)"} {
		if l := doctorLine(t, stdout, c); !strings.HasPrefix(l, "ok ") {
			t.Errorf("%s: %q, want ok", c, l)
		}
	}
}

// TestCLI_DoctorLeavesAnOlderIndexAsItIs: doctor looks at an index file an
// older version wrote (without the generation table) without upgrading it
// or writing a byte to it or its log; the next server or command upgrades
// it.
func TestCLI_DoctorLeavesAnOlderIndexAsItIs(t *testing.T) {
	home := doctorHome(t)
	path := filepath.Join(home, "index", "index.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DROP TABLE generation"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, home, "", "doctor")
	if code != exitOK || !strings.HasPrefix(doctorLine(t, stdout, "index (embedded)"), "ok ") {
		t.Fatalf("doctor: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, before) {
		t.Errorf("doctor changed the index file (%v)", err)
	}
	if wal, err := os.ReadFile(path + "-wal"); err == nil && len(wal) > 0 {
		t.Errorf("doctor wrote %d bytes of log beside the index", len(wal))
	}
}

// TestCLI_DoctorStaleIndex: a commit made behind the index's back (by a
// store opened without an index) is reported, with the fix, and doctor
// does not catch the index up itself.
func TestCLI_DoctorStaleIndex(t *testing.T) {
	home := doctorHome(t)
	commitWithoutIndex(t, home)
	for range 2 { // the second run sees the same: doctor changed nothing
		code, stdout, _ := cli(t, home, "", "doctor")
		l := doctorLine(t, stdout, "index (embedded)")
		if code != exitFailed || !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "stale") || !strings.Contains(l, "1 commit(s) behind") {
			t.Fatalf("doctor: exit %d, line %q\n%s", code, l, stdout)
		}
		if !strings.Contains(stdout, "fix: run `selmem reindex`") {
			t.Errorf("no fix printed:\n%s", stdout)
		}
	}
	if code, _, stderr := cli(t, home, "", "reindex"); code != exitOK {
		t.Fatalf("reindex: exit %d: %s", code, stderr)
	}
	if code, stdout, _ := cli(t, home, "", "doctor"); code != exitOK {
		t.Errorf("after reindex: exit %d\n%s", code, stdout)
	}
}

// TestCLI_DoctorDamagedRepository: a lost blob is found by the fsck.
func TestCLI_DoctorDamagedRepository(t *testing.T) {
	home := doctorHome(t)
	ctx := context.Background()
	s, err := memstore.Open(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, sha, err := s.Read(ctx, "/memories/workspaces/demo/task.md")
	s.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(home, "memory", ".git", "objects", sha[:2], sha[2:])
	if err := os.Remove(obj); err != nil {
		t.Fatalf("the demo's blob is not a loose object: %v", err)
	}
	code, stdout, _ := cli(t, home, "", "doctor")
	l := doctorLine(t, stdout, "repository")
	if code != exitFailed || !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "task.md") {
		t.Fatalf("doctor: exit %d, line %q\n%s", code, l, stdout)
	}
}

func TestCLI_DoctorConfigAndEmbedder(t *testing.T) {
	home := doctorHome(t)
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte("indx:\n  backend: sqlite\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := cli(t, home, "", "doctor")
	if l := doctorLine(t, stdout, "configuration"); code != exitFailed || !strings.Contains(l, "did you mean index?") {
		t.Errorf("doctor with a misspelt key: exit %d\n%s", code, stdout)
	}

	// An embedding server that answers with vectors of the wrong length.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float32{1, 2}}}})
	}))
	defer srv.Close()
	conf := "embedder:\n  kind: openai\n  base_url: " + srv.URL + "\n  model: tiny\n  dim: 8\n"
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = cli(t, home, "", "doctor")
	if l := doctorLine(t, stdout, "embedder"); code != exitFailed || !strings.HasPrefix(l, "FAIL") || !strings.Contains(stdout, "embedder.base_url") {
		t.Errorf("doctor with a bad embedder: exit %d\n%s", code, stdout)
	}
}

// TestCLI_DoctorPostgres: a running Postgres is reported with pgvector's
// version and the index's freshness; once stopped it is reported
// unreachable, with what to do.
func TestCLI_DoctorPostgres(t *testing.T) {
	c := pgtest.NewCluster(t)
	home := doctorHome(t)
	t.Setenv("SELMEM_TEST_PG_DSN", c.NewDatabase(t))
	conf := "index:\n  backend: postgres\n  dsn_env: SELMEM_TEST_PG_DSN\n"
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, home, "", "reindex"); code != exitOK {
		t.Fatalf("reindex: exit %d: %s", code, stderr)
	}
	// A table an older selmem (one index in public) left behind.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv("SELMEM_TEST_PG_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `CREATE TABLE public.selmem_index_state (id integer)`)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, home, "", "doctor")
	if code != exitOK || !strings.Contains(doctorLine(t, stdout, "postgres"), "pgvector ") ||
		!strings.HasPrefix(doctorLine(t, stdout, "index (postgres)"), "ok ") {
		t.Fatalf("doctor: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if l := doctorLine(t, stdout, "schema (postgres)"); !strings.HasPrefix(l, "ok ") || !strings.Contains(l, "schema selmem_") ||
		!strings.Contains(stdout, "tables of an older selmem are left in public (selmem_index_state)") ||
		!strings.Contains(stdout, "DROP TABLE public.selmem_index_state CASCADE;") {
		t.Errorf("doctor's schema lines:\n%s", stdout)
	}

	c.Stop(t)
	code, stdout, _ = cli(t, home, "", "doctor")
	l := doctorLine(t, stdout, "postgres")
	if code != exitFailed || !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "cannot reach Postgres") ||
		!strings.Contains(stdout, "fix: start Postgres") {
		t.Fatalf("doctor with Postgres stopped: exit %d\n%s", code, stdout)
	}
	if l := doctorLine(t, stdout, "index (embedded)"); !strings.HasPrefix(l, "ok ") {
		t.Errorf("the local fallback index: %q, want ok", l)
	}
}

// TestCLI_DoctorPendingRepair leaves a write journal whose working file is
// missing, as a repair that failed on a full disk does: doctor names the
// file and says to free space, not to restore a backup.
func TestCLI_DoctorPendingRepair(t *testing.T) {
	home := doctorHome(t)
	dir := filepath.Join(home, "memory")
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "workspaces", "demo", "task.md")); err != nil {
		t.Fatal(err)
	}
	journal := "commit " + strings.TrimSpace(string(head)) + "\nworkspaces/demo/task.md\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "selmem-pending"), []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := cli(t, home, "", "doctor")
	failed := slices.ContainsFunc(strings.Split(stdout, "\n"), func(l string) bool {
		return strings.HasPrefix(l, "FAIL  repository ") && strings.Contains(l, "/memories/workspaces/demo/task.md")
	})
	if code != exitFailed || !failed || !strings.Contains(stdout, "free space") || strings.Contains(stdout, "backup") {
		t.Fatalf("doctor: exit %d\n%s", code, stdout)
	}
}
