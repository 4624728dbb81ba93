package memstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/memstore"
)

// Environment of the child process TestRemote_KilledReplica runs.
const (
	envKillHome   = "SELMEM_TEST_KILL_HOME"
	envKillURL    = "SELMEM_TEST_KILL_URL"
	envKillLedger = "SELMEM_TEST_KILL_LEDGER"
)

// TestRemote_KilledReplica SIGKILLs a replica process in the middle of its
// writes, lets another replica write meanwhile, and restarts it: every write
// it acknowledged is in the remote's history, its repository is sound, and
// on restart it catches up with the remote, files and index.
func TestRemote_KilledReplica(t *testing.T) {
	if home := os.Getenv(envKillHome); home != "" {
		killChild(t, home)
		return
	}
	srv := gittest.NewServer(t)
	home := t.TempDir()
	mustReplica(t, home, srv.URL, replicaOpts{index: true}).Close(context.Background())
	ledger := filepath.Join(t.TempDir(), "ledger")
	cmd := exec.Command(os.Args[0], "-test.run=^TestRemote_KilledReplica$", "-test.count=1")
	cmd.Env = append(os.Environ(), envKillHome+"="+home, envKillURL+"="+srv.URL, envKillLedger+"="+ledger)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has acknowledged a few writes, whatever it is doing.
	give := time.Now().Add(waitLong)
	for len(readLedger(t, ledger)) < 3 && time.Now().Before(give) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	acked := readLedger(t, ledger)
	if len(acked) < 3 {
		t.Fatalf("the child acknowledged %d writes before the deadline", len(acked))
	}
	out, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "fsck", "--strict").CombinedOutput()
	if err != nil {
		t.Fatalf("fsck of the killed replica's repository: %v\n%s", err, out)
	}
	other := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
	mustCreate(t, other, "/memories/notes/after-kill.md", "# After\n\nafterkillword\n")

	s := mustReplica(t, home, srv.URL, replicaOpts{index: true})
	if got, want := mustHead(t, s), srv.Head(t, "main"); got != want {
		t.Fatalf("restarted replica at %s, remote at %s", got, want)
	}
	history := srv.Git(t, "rev-list", "main")
	for n, commit := range acked {
		if !strings.Contains(history, commit) {
			t.Errorf("acknowledged write %d (%s) is not in the remote's history", n, commit)
		}
		p := fmt.Sprintf("/memories/notes/k%d.md", n)
		if _, _, err := s.Read(context.Background(), p); err != nil {
			t.Errorf("read %s after the restart: %v", p, err)
		}
		if !found(t, s, fmt.Sprintf("killword%d", n), p) {
			t.Errorf("the restarted replica's index does not find %s", p)
		}
	}
	if !found(t, s, "afterkillword", "/memories/notes/after-kill.md") {
		t.Error("the restarted replica's index does not find the other replica's write")
	}
	t.Logf("%d writes acknowledged before the kill", len(acked))
}

// killChild writes until it is killed, recording each acknowledged write.
func killChild(t *testing.T, home string) {
	s, err := openReplica(t, home, os.Getenv(envKillURL), replicaOpts{index: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(os.Getenv(envKillLedger), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		res, err := s.Create(context.Background(), fmt.Sprintf("/memories/notes/k%d.md", n),
			fmt.Sprintf("# Kill\n\nkillword%d\n", n), &memstore.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "%d %s\n", n, res.Commit)
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// readLedger returns the commits of the acknowledged writes, by number.
func readLedger(t *testing.T, p string) map[int]string {
	t.Helper()
	out := map[int]string{}
	f, err := os.Open(p)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var n int
		var commit string
		if _, err := fmt.Sscanf(sc.Text(), "%d %s", &n, &commit); err == nil && len(commit) == 40 {
			out[n] = commit
		}
	}
	return out
}
