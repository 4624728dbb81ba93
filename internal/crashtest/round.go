package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mode is what writes to the home during a round.
type Mode string

// Modes.
const (
	// ModeKill: the server with MCP clients and CLI writers; the server is
	// SIGKILLed at a random moment (and, in some rounds, the CLI writers).
	ModeKill Mode = "kill"
	// ModeCLI: only CLI processes write to the home; no server, no kill.
	ModeCLI Mode = "cli"
	// ModeMix: the server with MCP clients and CLI writers for Duration,
	// then a graceful stop; no kill.
	ModeMix Mode = "mix"
)

// Config is one harness run.
type Config struct {
	Bin     string // the selmem binary
	Home    string // SELMEM_HOME; persists across rounds
	WorkDir string // server logs go here; "" keeps none
	Mode    Mode
	Rounds  int
	Clients int // MCP HTTP clients per round
	// CLIProcs writer processes run CLIWrites `selmem create` each, one
	// after the other, per round (fewer when the round ends first).
	CLIProcs, CLIWrites int
	// The server is killed after a random delay in [KillMin, KillMax).
	KillMin, KillMax time.Duration
	// KillCLI is the probability that a kill round also SIGKILLs the CLI
	// processes in flight.
	KillCLI float64
	// Duration is how long MCP clients write in a mix round.
	Duration time.Duration
	// ClientWrites bounds the writes of one MCP client in a round.
	ClientWrites int
	// Samples is how many files each round checks with memory_view,
	// memory_search and memory_str_replace (besides every file of the round
	// checked with memory_view).
	Samples int
	Seed    uint64
	Log     io.Writer // progress; nil discards
}

func (c *Config) defaults() {
	if c.Mode == "" {
		c.Mode = ModeKill
	}
	if c.Rounds <= 0 {
		c.Rounds = 1
	}
	if c.KillMax <= c.KillMin {
		c.KillMax = c.KillMin + time.Millisecond
	}
	if c.Duration <= 0 {
		c.Duration = 2 * time.Second
	}
	if c.ClientWrites <= 0 {
		c.ClientWrites = 100000
	}
	if c.Samples <= 0 {
		c.Samples = 20
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// runner is one run's state.
type runner struct {
	cfg      Config
	rng      *rand.Rand
	led      *ledger
	prevHead string // HEAD after the previous round's checks
	lost     map[string]bool
	failLeft map[string]bool
}

// Run executes cfg.Rounds rounds on cfg.Home and checks the invariants
// after each. The error is for a harness that could not run (no binary, no
// git); broken invariants are in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.Bin == "" || cfg.Home == "" {
		return nil, errors.New("crashtest: Bin and Home are required")
	}
	switch cfg.Mode {
	case ModeKill, ModeCLI, ModeMix:
	default:
		return nil, fmt.Errorf("crashtest: mode %q is not one of kill, cli, mix", cfg.Mode)
	}
	r := &runner{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5e1)), led: newLedger(),
		lost: map[string]bool{}, failLeft: map[string]bool{}}
	rep := &Report{Seed: cfg.Seed, Mode: cfg.Mode}
	if err := r.initHome(ctx); err != nil {
		return nil, err
	}
	for i := 1; i <= cfg.Rounds && ctx.Err() == nil; i++ {
		rr := r.round(ctx, i)
		rep.Rounds = append(rep.Rounds, rr)
		fmt.Fprintln(cfg.Log, rr.line())
		if rr.Fatal {
			break
		}
	}
	c := r.led.counts()
	rep.Acked, rep.Failed, rep.Unknown = c[Acked], c[Failed], c[Unknown]
	rep.Lost, rep.FailedLeft = len(r.lost), len(r.failLeft)
	return rep, ctx.Err()
}

// initHome creates the memory repository with `selmem init` and records
// its HEAD as the history every later HEAD must descend from.
func (r *runner) initHome(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, r.cfg.Bin, "init")
	cmd.Env = env(r.cfg.Home)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("selmem init: %w\n%s", err, out)
	}
	head, err := git(ctx, r.memDir(), nil, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return err
	}
	r.prevHead = strings.TrimSpace(string(head))
	return nil
}

func (r *runner) memDir() string { return filepath.Join(r.cfg.Home, "memory") }

func (r *runner) logFile(round int) string {
	if r.cfg.WorkDir == "" {
		return ""
	}
	return filepath.Join(r.cfg.WorkDir, fmt.Sprintf("server-round%03d.log", round))
}

// round runs the writers of one round, crashes or stops the server, restarts
// it and checks the invariants.
func (r *runner) round(ctx context.Context, n int) *RoundReport {
	rr := &RoundReport{Round: n, Mode: r.cfg.Mode}
	before := r.led.counts()
	stop := make(chan struct{})
	var killed atomic.Bool
	var wg sync.WaitGroup
	var srv *server
	if r.cfg.Mode != ModeCLI {
		var err error
		if srv, err = startServer(ctx, r.cfg.Bin, r.cfg.Home, r.logFile(n)); err != nil {
			rr.problem("server did not start before the round: %v", err)
			rr.Fatal = true
			return rr
		}
		for c := 0; c < r.cfg.Clients; c++ {
			wg.Add(1)
			seed := r.rng.Uint64()
			go func() {
				defer wg.Done()
				r.mcpWriter(ctx, srv.url, n, c, seed, stop, &killed, rr)
			}()
		}
	}
	cli := &cliSet{}
	for p := 0; p < r.cfg.CLIProcs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.cliWriter(ctx, n, p, stop, cli, rr)
		}()
	}
	switch r.cfg.Mode {
	case ModeKill:
		d := r.cfg.KillMin + time.Duration(r.rng.Int64N(int64(r.cfg.KillMax-r.cfg.KillMin)))
		rr.KillAfter = d
		rr.KilledCLI = r.rng.Float64() < r.cfg.KillCLI && r.cfg.CLIProcs > 0
		sleep(ctx, d)
		killed.Store(true)
		srv.kill()
		if rr.KilledCLI {
			cli.killAll()
		}
		close(stop)
	case ModeMix:
		sleep(ctx, r.cfg.Duration)
		close(stop)
	case ModeCLI:
		// The CLI writers stop after CLIWrites each.
	}
	wg.Wait()
	if r.cfg.Mode == ModeMix {
		if err := srv.stop(); err != nil {
			rr.problem("graceful stop: %v", err)
		}
	}
	after := r.led.counts()
	rr.Acked, rr.Failed, rr.Unknown = after[Acked]-before[Acked], after[Failed]-before[Failed], after[Unknown]-before[Unknown]
	r.check(ctx, n, rr)
	return rr
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// ownFile is a file an MCP client created and may edit.
type ownFile struct {
	path, token, content string
	rev                  int
}

// mcpWriter is one MCP client: it creates unique files and edits its own
// with str_replace until stopped, the server dies or ClientWrites is reached.
func (r *runner) mcpWriter(ctx context.Context, url string, round, id int, seed uint64, stop <-chan struct{}, killed *atomic.Bool, rr *RoundReport) {
	rng := rand.New(rand.NewPCG(seed, uint64(id)))
	cs, err := connect(ctx, url)
	if err != nil {
		if !killed.Load() {
			rr.problem("client %d could not connect: %v", id, err)
		}
		return
	}
	defer cs.Close()
	writer := fmt.Sprintf("mcp r%d c%d", round, id)
	var own []*ownFile
	for seq := 0; seq < r.cfg.ClientWrites && !stopped(stop) && ctx.Err() == nil; seq++ {
		var o Outcome
		var res result
		var err error
		if seq%6 == 5 {
			r.draftCycle(cs, round, id, seq, killed, rr)
			continue
		}
		if len(own) > 0 && seq%3 == 2 {
			f := own[rng.IntN(len(own))]
			old, next := revLine(f.rev), revLine(f.rev+1)
			content := strings.Replace(f.content, old, next, 1)
			res, err = call(cs, "memory_str_replace", map[string]any{"path": f.path, "old_str": old, "new_str": next})
			o = outcome(res, err)
			r.led.record(f.path, f.token, writer, round, content, o)
			if o == Acked {
				f.rev++
				f.content = content
			}
		} else {
			tag := fmt.Sprintf("r%d c%d s%d", round, id, seq)
			f := &ownFile{
				path:  fmt.Sprintf("/memories/workspaces/crash/notes/r%d-c%d-%d.md", round, id, seq),
				token: fmt.Sprintf("crashr%dc%ds%d", round, id, seq),
			}
			f.content = note(tag, f.token, 0)
			res, err = call(cs, "memory_create", map[string]any{"path": f.path, "file_text": f.content})
			o = outcome(res, err)
			r.led.record(f.path, f.token, writer, round, f.content, o)
			if o == Acked {
				own = append(own, f)
			}
		}
		switch {
		case o == Unknown && !killed.Load():
			rr.problem("client %d: no answer while the server was up: %v", id, err)
			return
		case o == Unknown:
			return
		case o == Failed && err != nil:
			rr.sampleError(err.Error())
		case o == Failed:
			rr.sampleError(res.text)
		}
	}
}

// draftCycle opens a draft of the client's own workspace, writes a file
// into it and publishes or discards it, so that kills also land while
// draft refs move. Outcomes are not in the ledger (a draft is not the
// published memory); check asserts that no draft or proposal ref is left
// empty and fsck that every ref names a whole commit.
func (r *runner) draftCycle(cs *mcp.ClientSession, round, id, seq int, killed *atomic.Bool, rr *RoundReport) {
	ws := fmt.Sprintf("crash-drafts-c%d", id)
	step := func(tool string, args map[string]any) {
		res, err := call(cs, tool, args)
		if outcome(res, err) == Failed && !killed.Load() {
			rr.sampleError(tool + ": " + res.text)
		}
	}
	step("memory_draft_open", map[string]any{"workspace": ws})
	step("memory_create", map[string]any{
		"path":      fmt.Sprintf("/memories/workspaces/%s/r%d-s%d.md", ws, round, seq),
		"file_text": note(fmt.Sprintf("draft r%d c%d s%d", round, id, seq), fmt.Sprintf("draftr%dc%ds%d", round, id, seq), 0),
	})
	if seq%12 == 11 {
		step("memory_draft_discard", map[string]any{"workspace": ws})
		return
	}
	step("memory_publish", map[string]any{"workspace": ws, "message": "crash test"})
}

// cliSet is the CLI processes in flight, for killing them together.
type cliSet struct {
	mu     sync.Mutex
	procs  map[*exec.Cmd]bool
	killed bool
}

func (s *cliSet) add(c *exec.Cmd) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.killed {
		return false
	}
	if s.procs == nil {
		s.procs = map[*exec.Cmd]bool{}
	}
	s.procs[c] = true
	return true
}

func (s *cliSet) remove(c *exec.Cmd) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.procs, c)
}

func (s *cliSet) killAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killed = true
	for c := range s.procs {
		_ = c.Process.Kill()
	}
}

// cliTimeout bounds one `selmem create`; one that outlives it is killed and
// counted UNKNOWN (and reported).
const cliTimeout = 2 * time.Minute

// cliWriter runs `selmem create PATH` (content on stdin) CLIWrites times,
// one process after the other, until stopped.
func (r *runner) cliWriter(ctx context.Context, round, id int, stop <-chan struct{}, set *cliSet, rr *RoundReport) {
	writer := fmt.Sprintf("cli r%d p%d", round, id)
	for seq := 0; seq < r.cfg.CLIWrites && !stopped(stop) && ctx.Err() == nil; seq++ {
		path := fmt.Sprintf("/memories/workspaces/crash/notes/r%d-p%d-%d.md", round, id, seq)
		token := fmt.Sprintf("crashr%dp%ds%d", round, id, seq)
		content := note(fmt.Sprintf("r%d p%d s%d", round, id, seq), token, 0)
		cmd := exec.Command(r.cfg.Bin, "create", path)
		cmd.Env = env(r.cfg.Home)
		cmd.Stdin = strings.NewReader(content)
		var stderr bytes.Buffer // read after Wait only
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			rr.problem("start selmem create: %v", err)
			return
		}
		if !set.add(cmd) {
			// Killed before it was registered: kill it the same way.
			_ = cmd.Process.Kill()
		}
		timer := time.AfterFunc(cliTimeout, func() { _ = cmd.Process.Kill() })
		err := cmd.Wait()
		timedOut := !timer.Stop()
		set.remove(cmd)
		o := Acked
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ee.Exited():
			o = Failed
			rr.sampleError(strings.TrimSpace(stderr.String()))
		default:
			o = Unknown
		}
		r.led.record(path, token, writer, round, content, o)
		if timedOut {
			rr.problem("%s: selmem create ran over %v and was killed", path, cliTimeout)
		}
		if o == Unknown {
			return
		}
	}
}
