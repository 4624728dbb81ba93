package crashtest

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The TestCrash_* tests run the real binary and fail whenever an invariant
// breaks. On the store before its commit/ref/locking fix they fail: two
// processes on one home re-initialise the repository and lose acknowledged
// writes, and a SIGKILL can leave an empty refs/heads/main.
//
// Flags for longer runs, e.g.
//
//	go test ./internal/crashtest -run Kill -crash.rounds 20 -crash.clients 16 -timeout 30m
var (
	flagRounds    = flag.Int("crash.rounds", 3, "kill rounds")
	flagClients   = flag.Int("crash.clients", 4, "MCP HTTP clients per round")
	flagCLI       = flag.Int("crash.cli", 2, "CLI writer processes per round")
	flagCLIWrites = flag.Int("crash.cli-writes", 20, "writes per CLI process per round")
	flagSeed      = flag.Uint64("crash.seed", 0, "random seed (0: from the clock)")
)

// bin is the selmem binary under test, built once.
var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "selmem-crashtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wd, _ := os.Getwd()
	root, err := ModuleRoot(wd)
	if err == nil {
		bin, err = Build(context.Background(), root, dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func seed(t *testing.T) uint64 {
	t.Helper()
	s := *flagSeed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (repeat with -crash.seed %d)", s, s)
	return s
}

// runHarness runs cfg on a fresh home and fails the test on any broken
// invariant, logging the report. The kill moments are random; what is
// asserted is the invariants, never a duration.
func runHarness(t *testing.T, cfg Config) {
	t.Helper()
	work := t.TempDir()
	cfg.Bin, cfg.Home, cfg.WorkDir = bin, filepath.Join(work, "home"), work
	cfg.Seed = seed(t)
	var progress strings.Builder
	cfg.Log = &progress
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, progress.String())
	}
	var b strings.Builder
	rep.Write(&b)
	t.Logf("\n%s\n%s", progress.String(), b.String())
	if rep.Acked == 0 {
		t.Errorf("no write was acknowledged; the harness tested nothing")
	}
	if rep.Broken() {
		t.Errorf("invariants broken (seed %d): %d acknowledged files lost, %d failed writes present; see the report above",
			rep.Seed, rep.Lost, rep.FailedLeft)
	}
}

// TestCrash_KillServer SIGKILLs the HTTP server (and, in some rounds, the CLI
// writers) at random moments while MCP clients and CLI processes write.
func TestCrash_KillServer(t *testing.T) {
	runHarness(t, Config{Mode: ModeKill, Rounds: *flagRounds, Clients: *flagClients,
		CLIProcs: *flagCLI, CLIWrites: *flagCLIWrites,
		KillMin: 200 * time.Millisecond, KillMax: 2 * time.Second, KillCLI: 0.5, Samples: 10})
}

// TestCrash_CLIProcessesOneHome runs CLI writer processes on one home with
// no server: every exit 0 must be at HEAD, every failure must leave nothing.
func TestCrash_CLIProcessesOneHome(t *testing.T) {
	runHarness(t, Config{Mode: ModeCLI, Rounds: 1, CLIProcs: *flagCLI, CLIWrites: *flagCLIWrites, Samples: 10})
}

// TestCrash_ServerAndCLI mixes the HTTP server's clients with CLI processes
// on one home, and stops the server gracefully.
func TestCrash_ServerAndCLI(t *testing.T) {
	runHarness(t, Config{Mode: ModeMix, Rounds: 1, Clients: *flagClients, CLIProcs: *flagCLI,
		CLIWrites: *flagCLIWrites, Duration: time.Second, Samples: 10})
}

func TestFile_Allowed(t *testing.T) {
	tests := []struct {
		name    string
		writes  []Outcome // outcomes of writes v0, v1, ... in order
		content string
		present bool
		want    bool
	}{
		{"acked present", []Outcome{Acked}, "v0", true, true},
		{"acked absent", []Outcome{Acked}, "", false, false},
		{"acked then edited, old content", []Outcome{Acked, Acked}, "v0", true, false},
		{"acked then edited, new content", []Outcome{Acked, Acked}, "v1", true, true},
		{"failed absent", []Outcome{Failed}, "", false, true},
		{"failed present", []Outcome{Failed}, "v0", true, false},
		{"unknown absent", []Outcome{Unknown}, "", false, true},
		{"unknown present", []Outcome{Unknown}, "v0", true, true},
		{"edit unknown, old content", []Outcome{Acked, Unknown}, "v0", true, true},
		{"edit unknown, new content", []Outcome{Acked, Unknown}, "v1", true, true},
		{"edit failed, new content", []Outcome{Acked, Failed}, "v1", true, false},
		{"edit failed, absent", []Outcome{Acked, Failed}, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger()
			for i, o := range tt.writes {
				l.record("/memories/x.md", "tok", "w", 1, fmt.Sprintf("v%d", i), o)
			}
			f := l.snapshot()[0]
			if got := f.allowed(tt.content, tt.present); got != tt.want {
				t.Errorf("allowed(%q, %v) = %v, want %v", tt.content, tt.present, got, tt.want)
			}
		})
	}
}

func TestViewShows(t *testing.T) {
	content := note("r1 c0 s0", "crashr1c0s0", 3)
	var view strings.Builder
	view.WriteString("Here's the content of /memories/x.md with line numbers:\n")
	for i, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		fmt.Fprintf(&view, "%6d\t%s\n", i+1, l)
	}
	if !viewShows(view.String(), content) {
		t.Errorf("viewShows(view of content) = false\n%s", view.String())
	}
	if viewShows(view.String(), note("r1 c0 s0", "crashr1c0s0", 4)) {
		t.Errorf("viewShows(view, other revision) = true")
	}
}

func TestNextBatchObject(t *testing.T) {
	out := "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 blob 5\nhello\nHEAD:gone.md missing\n" +
		"4b825dc642cb6eb9a060e54bf8d69288fbee4904 tree 3\nabc\n"
	br := bufio.NewReader(strings.NewReader(out))
	for i, want := range []struct {
		content string
		ok      bool
	}{{"hello", true}, {"", false}, {"", false}} {
		content, ok, err := nextBatchObject(br)
		if err != nil || content != want.content || ok != want.ok {
			t.Errorf("object %d: got (%q, %v, %v), want (%q, %v, nil)", i, content, ok, err, want.content, want.ok)
		}
	}
}

func TestOutcome(t *testing.T) {
	tests := []struct {
		name string
		res  result
		err  error
		want Outcome
	}{
		{"result", result{text: "File created"}, nil, Acked},
		{"error result", result{isError: true}, nil, Failed},
		{"server error response", result{}, fmt.Errorf("calling: %w", &jsonrpc.Error{Code: -32603, Message: "panic recovered"}), Failed},
		{"rejected by transport", result{}, fmt.Errorf("calling: %w", &jsonrpc.Error{Code: -32005}), Unknown},
		{"connection refused", result{}, errors.New("dial tcp: connection refused"), Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outcome(tt.res, tt.err); got != tt.want {
				t.Errorf("outcome = %v, want %v", got, tt.want)
			}
		})
	}
}
