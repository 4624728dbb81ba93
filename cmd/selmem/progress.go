package main

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// terminal reports whether stderr is a terminal: progress is drawn only
// there, never on stdout (the stdio transport, and the output scripts
// read) and never by serve.
func (a *app) terminal() bool {
	if a.isTerminal != nil {
		return a.isTerminal(a.stderr)
	}
	f, ok := a.stderr.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// clock returns the current time (a.now in tests).
func (a *app) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

// bar is a progress bar on stderr, drawn from its first update; a nil
// *bar (stderr is not a terminal) draws nothing.
type bar struct {
	w     io.Writer
	desc  string
	bytes bool // count bytes (profiling) rather than files
	pb    *progressbar.ProgressBar
	max   int64
}

// newBar returns a bar described by desc, or nil when stderr is not a
// terminal.
func (a *app) newBar(desc string, bytes bool) *bar {
	if !a.terminal() {
		return nil
	}
	return &bar{w: a.stderr, desc: desc, bytes: bytes}
}

// set shows done of total; total <= 0 (unknown) shows a spinner.
func (b *bar) set(done, total int64) {
	if b == nil {
		return
	}
	if total <= 0 {
		total = -1
	}
	if b.pb == nil {
		opts := []progressbar.Option{progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription(b.desc),
			progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionSetRenderBlankState(true)}
		if b.bytes {
			opts = append(opts, progressbar.OptionShowBytes(true))
		} else {
			opts = append(opts, progressbar.OptionShowCount())
		}
		b.pb, b.max = progressbar.NewOptions64(total, opts...), total
	} else if total != b.max {
		b.pb.ChangeMax64(total)
		b.max = total
	}
	_ = b.pb.Set64(done)
}

// files adapts the bar to memstore.Progress.
func (b *bar) files(done, total int) { b.set(int64(done), int64(total)) }

// finish clears the bar from the terminal.
func (b *bar) finish() {
	if b == nil || b.pb == nil {
		return
	}
	_ = b.pb.Finish()
}
