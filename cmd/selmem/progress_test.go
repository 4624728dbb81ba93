package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
)

// fakeTTY is stderr as a terminal in tests. Whenever the catch-up's
// progress bar is drawn it moves the test clock on by an hour, so the
// time reindex prints shows whether it counts the catch-up.
type fakeTTY struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	clock *time.Time
}

func (f *fakeTTY) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if bytes.Contains(p, []byte("catching up")) {
		*f.clock = f.clock.Add(time.Hour)
	}
	return f.buf.Write(p)
}

func (f *fakeTTY) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buf.String()
}

// runWith runs a command line with stderr seen as a terminal or not and a
// fake clock.
func runWith(t *testing.T, home string, tty bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("SELMEM_HOME", home)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	errw := &fakeTTY{clock: &clock}
	var out bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: errw,
		isTerminal: func(w io.Writer) bool { return tty && w == io.Writer(errw) },
		now:        func() time.Time { return clock }}
	code = a.run(context.Background(), args)
	return code, out.String(), errw.String()
}

// commitBehindIndex makes a commit with a store opened without an index,
// so the next command's catch-up has a file to index.
func commitBehindIndex(t *testing.T, home, name string) {
	t.Helper()
	ctx := context.Background()
	s, err := memstore.Open(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if _, err := s.Create(ctx, "/memories/notes/"+name, "# Behind the index\n\n- one fact\n", nil); err != nil {
		t.Fatal(err)
	}
}

func TestCLI_ReindexProgress(t *testing.T) {
	home := doctorHome(t)
	tests := []struct {
		name       string
		tty        bool
		wantStderr []string
		wantTime   string
	}{
		// Not a terminal: nothing on stderr; the fake clock never moves.
		{name: "pipe", tty: false, wantTime: "in 0s."},
		// A terminal: both bars on stderr, and the time printed counts
		// the catch-up (the hour the fake terminal added while drawing it).
		{name: "terminal", tty: true, wantStderr: []string{"catching up the index", "reindexing"}, wantTime: "in 1h0m0s."},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			commitBehindIndex(t, home, "behind"+string(rune('a'+i))+".md")
			code, stdout, stderr := runWith(t, home, tt.tty, "reindex")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// stdout holds the one result line, never a bar.
			if lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n"); len(lines) != 1 ||
				!strings.HasPrefix(lines[0], "Reindexed ") || !strings.HasSuffix(lines[0], tt.wantTime) {
				t.Errorf("stdout = %q, want one line ending %q", stdout, tt.wantTime)
			}
			if len(tt.wantStderr) == 0 && stderr != "" {
				t.Errorf("stderr = %q, want nothing when it is not a terminal", stderr)
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr = %q, want %q", stderr, w)
				}
			}
		})
	}
}

// TestCLI_ProfileProgress: profiling draws its bar on a terminal stderr
// only; stdout is the same profile either way.
func TestCLI_ProfileProgress(t *testing.T) {
	home := t.TempDir()
	csv := filepath.Join(t.TempDir(), "big.csv")
	var b strings.Builder
	b.WriteString("id,region,amount\n")
	for i := range 20000 {
		b.WriteString(strings.Join([]string{strconv.Itoa(i), []string{"north", "south", "east"}[i%3], strconv.Itoa(i * 7 % 1000)}, ",") + "\n")
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, plain, stderr := runWith(t, home, false, "profile", csv)
	if code != exitOK || stderr != "" {
		t.Fatalf("profile (pipe): exit %d, stderr %q", code, stderr)
	}
	code, onTTY, stderr := runWith(t, home, true, "profile", csv)
	if code != exitOK || !strings.Contains(stderr, "profiling") {
		t.Fatalf("profile (terminal): exit %d, stderr %q", code, stderr)
	}
	if plain != onTTY {
		t.Errorf("stdout differs with a terminal on stderr:\n%s\nvs\n%s", plain, onTTY)
	}
}

// TestCLI_RefreshProgress: loading a refresh's data draws a bar on a
// terminal stderr, and nothing on a pipe.
func TestCLI_RefreshProgress(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	t.Setenv("SELMEM_PROFILE_DATA_ROOTS", root)
	if err := os.WriteFile(filepath.Join(root, "sales.csv"), []byte("region,amount\nEMEA,10\nAMER,20.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "--demo"},
		{"create", "/memories/workspaces/demo/tools/weekly.yaml"},
		{"artifact", "init", "demo", "dash", "--source", "weekly"},
	} {
		if code, _, stderr := cli(t, home, "kind: file\npath: "+root+"/sales.csv\n", args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	for _, tty := range []bool{false, true} {
		code, stdout, stderr := runWith(t, home, tty, "refresh", "demo", "dash")
		if code != exitOK || strings.Contains(stdout, "loading") {
			t.Fatalf("refresh (terminal %v): exit %d\nstdout: %s\nstderr: %s", tty, code, stdout, stderr)
		}
		if got := strings.Contains(stderr, "loading demo/dash"); got != tty {
			t.Errorf("terminal %v: bar on stderr = %v: %q", tty, got, stderr)
		}
	}
}
