package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selmem/selmem/internal/pgtest"
)

// statusJSON runs selmem status --json with the environment env.
func statusJSON(t *testing.T, home string, env ...string) statusReport {
	t.Helper()
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	code, stdout, stderr := cli(t, home, "", "status", "--json")
	if code != exitOK {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	var rep statusReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("status --json: %v\n%s", err, stdout)
	}
	return rep
}

// gitOut runs git in dir and returns its trimmed output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestCLI_Status: status reports the branch, the remote's branch and the
// index's lag as they are, and changes nothing (a second run reports the
// same lag).
func TestCLI_Status(t *testing.T) {
	home := doctorHome(t)
	memDir := filepath.Join(home, "memory")
	head := gitOut(t, memDir, "rev-parse", "main")

	rep := statusJSON(t, home)
	if rep.Memory == "" || rep.Head != head || rep.Remote != nil {
		t.Fatalf("status = %+v, want head %s and no remote", rep, head)
	}
	if len(rep.Indexes) != 1 || rep.Indexes[0].Backend != "embedded" || rep.Indexes[0].Behind != 0 || rep.Indexes[0].Commit != head {
		t.Fatalf("indexes = %+v, want the embedded index current", rep.Indexes)
	}

	// A commit made without the index: one behind, twice.
	commitWithoutIndex(t, home)
	for range 2 {
		if got := statusJSON(t, home).Indexes[0].Behind; got != 1 {
			t.Fatalf("index behind = %d, want 1", got)
		}
	}

	// A bare remote with this history plus one commit the replica lacks.
	bare := filepath.Join(t.TempDir(), "memory.git")
	gitOut(t, memDir, "init", "-q", "--bare", "-b", "main", bare)
	gitOut(t, memDir, "push", "-q", bare, "main")
	clone := filepath.Join(t.TempDir(), "clone")
	gitOut(t, memDir, "clone", "-q", bare, clone)
	if err := os.WriteFile(filepath.Join(clone, "elsewhere.md"), []byte("# From another replica\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, clone, "add", ".")
	gitOut(t, clone, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "elsewhere")
	gitOut(t, clone, "push", "-q", "origin", "main")
	remoteHead := gitOut(t, clone, "rev-parse", "main")

	// A second remote holding exactly the local history.
	same := filepath.Join(t.TempDir(), "same.git")
	gitOut(t, memDir, "init", "-q", "--bare", "-b", "main", same)
	gitOut(t, memDir, "push", "-q", same, "main")
	localHead := gitOut(t, memDir, "rev-parse", "main")

	tests := []struct {
		name, url  string
		wantHead   string
		wantBehind int
		wantErr    bool
	}{
		{"up to date", "file://" + same, localHead, 0, false},
		{"behind, not fetched", "file://" + bare, remoteHead, -1, false},
		{"unreachable", "http://127.0.0.1:1/memory.git", "", -1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := statusJSON(t, home, "SELMEM_REMOTE_URL", tc.url)
			r := rep.Remote
			if r == nil || r.Head != tc.wantHead || r.Behind != tc.wantBehind || (r.Error != "") != tc.wantErr {
				t.Fatalf("remote = %+v, want head %q behind %d error %v", r, tc.wantHead, tc.wantBehind, tc.wantErr)
			}
			code, stdout, _ := cli(t, home, "", "status")
			if code != exitOK || !strings.Contains(stdout, "remote ") {
				t.Fatalf("status: exit %d\n%s", code, stdout)
			}
		})
	}
	if got := gitOut(t, memDir, "rev-parse", "main"); got != localHead {
		t.Fatalf("status moved the branch to %s", got)
	}
}

// TestCLI_StatusPostgres: with the Postgres backend, status reports the
// memory's index in its own schema next to the embedded one.
func TestCLI_StatusPostgres(t *testing.T) {
	home := doctorHome(t)
	t.Setenv("SELMEM_TEST_PG_DSN", pgtest.DSN(t))
	conf := "index:\n  backend: postgres\n  dsn_env: SELMEM_TEST_PG_DSN\n"
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, home, "", "reindex"); code != exitOK {
		t.Fatalf("reindex: exit %d: %s", code, stderr)
	}
	rep := statusJSON(t, home)
	if len(rep.Indexes) != 2 || rep.Indexes[1].Backend != "postgres" || rep.Indexes[1].Commit != rep.Head || rep.Indexes[1].Behind != 0 {
		t.Fatalf("indexes = %+v, want the Postgres index at HEAD %s", rep.Indexes, rep.Head)
	}
}
