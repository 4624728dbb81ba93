package crashtest

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// maxNotes bounds the problems and error samples a round keeps.
const maxNotes = 16

// RoundReport is what one round did and found.
type RoundReport struct {
	Round     int
	Mode      Mode
	KillAfter time.Duration // 0 when the server was not killed
	KilledCLI bool

	// Writes made in this round, by outcome.
	Acked, Failed, Unknown int

	// Lost counts acknowledged writes (of any round so far) whose
	// acknowledged content is not at HEAD.
	Lost int
	// NewLost counts the lost files that no earlier round found lost.
	NewLost int
	// FailedLeft counts failed writes whose content is at HEAD.
	FailedLeft int
	// FsckErrors counts git fsck --strict lines other than "dangling ...".
	FsckErrors int
	// WorktreeDiffs counts paths where the work tree differs from HEAD.
	WorktreeDiffs int
	// NewRoot is set when HEAD no longer descends from the previous round's
	// HEAD, or history has more than one root commit.
	NewRoot bool
	// ViewMismatch, SearchMiss and ReplaceFail count sampled files that
	// memory_view did not show as at HEAD, memory_search did not find by
	// their token, or memory_str_replace could not edit.
	ViewMismatch, SearchMiss, ReplaceFail int
	// RestartFailed is set when the server did not come back on the home.
	RestartFailed bool
	// Fatal stops the run: the home is unusable for further rounds.
	Fatal bool

	mu       sync.Mutex
	Problems []string // first few broken invariants, described
	Errors   []string // first few distinct error results of failed writes
}

func (rr *RoundReport) problem(format string, args ...any) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if len(rr.Problems) < maxNotes {
		rr.Problems = append(rr.Problems, fmt.Sprintf(format, args...))
	}
}

func (rr *RoundReport) sampleError(msg string) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	for _, e := range rr.Errors {
		if e == msg {
			return
		}
	}
	if len(rr.Errors) < maxNotes {
		rr.Errors = append(rr.Errors, msg)
	}
}

// Broken reports whether the round broke an invariant.
func (rr *RoundReport) Broken() bool {
	return rr.Lost > 0 || rr.FailedLeft > 0 || rr.FsckErrors > 0 || rr.WorktreeDiffs > 0 || rr.NewRoot ||
		rr.ViewMismatch > 0 || rr.SearchMiss > 0 || rr.ReplaceFail > 0 || rr.RestartFailed || len(rr.Problems) > 0
}

func (rr *RoundReport) line() string {
	status := "ok"
	if rr.Broken() {
		status = "BROKEN"
	}
	return fmt.Sprintf("round %d (%s, kill after %v, cli killed %v): acked %d failed %d unknown %d | lost %d (new %d) failed-left %d fsck %d worktree %d new-root %v view %d search %d replace %d restart-failed %v: %s",
		rr.Round, rr.Mode, rr.KillAfter.Round(time.Millisecond), rr.KilledCLI, rr.Acked, rr.Failed, rr.Unknown,
		rr.Lost, rr.NewLost, rr.FailedLeft, rr.FsckErrors, rr.WorktreeDiffs, rr.NewRoot, rr.ViewMismatch, rr.SearchMiss, rr.ReplaceFail,
		rr.RestartFailed, status)
}

// Report is a whole run.
type Report struct {
	Seed   uint64
	Mode   Mode
	Rounds []*RoundReport
	// Writes by outcome over the run, including the str_replace edits the
	// checks themselves make (a round's counts are its writers' only).
	Acked, Failed, Unknown int
	// Lost is the number of distinct acknowledged files found not at their
	// acknowledged content in some round; FailedLeft the number of distinct
	// failed writes found at HEAD.
	Lost, FailedLeft int
}

// Broken reports whether any round broke an invariant.
func (r *Report) Broken() bool {
	for i := range r.Rounds {
		if r.Rounds[i].Broken() {
			return true
		}
	}
	return r.Lost > 0 || r.FailedLeft > 0
}

// Write prints the per-round table, the totals and the problems seen.
func (r *Report) Write(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tkill@\tcli-kill\tacked\tfailed\tunknown\tlost\tnew-lost\tfailed-left\tfsck\tworktree\tnew-root\tview\tsearch\treplace\trestart\t")
	var fsck, wt, roots, view, search, repl, restart, broken int
	for i := range r.Rounds {
		rr := r.Rounds[i]
		kill := "-"
		if rr.KillAfter > 0 {
			kill = rr.KillAfter.Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%d\t%s\t%v\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%v\t%d\t%d\t%d\t%v\t\n", rr.Round, kill, rr.KilledCLI,
			rr.Acked, rr.Failed, rr.Unknown, rr.Lost, rr.NewLost, rr.FailedLeft, rr.FsckErrors, rr.WorktreeDiffs, rr.NewRoot,
			rr.ViewMismatch, rr.SearchMiss, rr.ReplaceFail, !rr.RestartFailed)
		fsck += rr.FsckErrors
		wt += rr.WorktreeDiffs
		view += rr.ViewMismatch
		search += rr.SearchMiss
		repl += rr.ReplaceFail
		if rr.NewRoot {
			roots++
		}
		if rr.RestartFailed {
			restart++
		}
		if rr.Broken() {
			broken++
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\nseed %d, mode %s: %d rounds, %d broke an invariant\n", r.Seed, r.Mode, len(r.Rounds), broken)
	fmt.Fprintf(w, "writes: %d acknowledged, %d failed, %d unknown (no answer)\n", r.Acked, r.Failed, r.Unknown)
	fmt.Fprintf(w, "lost acknowledged files: %d; failed writes present: %d; fsck error lines: %d; work-tree diffs: %d\n",
		r.Lost, r.FailedLeft, fsck, wt)
	fmt.Fprintf(w, "rounds with a new root / lost history: %d; restarts failed: %d; view mismatches: %d; search misses: %d; str_replace failures: %d\n",
		roots, restart, view, search, repl)
	for i := range r.Rounds {
		rr := r.Rounds[i]
		for _, p := range rr.Problems {
			fmt.Fprintf(w, "round %d: %s\n", rr.Round, p)
		}
		for _, e := range rr.Errors {
			fmt.Fprintf(w, "round %d: a failed write said: %s\n", rr.Round, strings.ReplaceAll(e, "\n", " | "))
		}
	}
}
