package refresh

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatcherOptions configure a Watcher.
type WatcherOptions struct {
	// Debounce is how long a watched file must stay quiet after a change
	// before its artifacts refresh (default 500ms), so a file written in
	// several steps refreshes once.
	Debounce time.Duration
	// Rescan is how often the bindings are read again for new or changed
	// file connectors (default 30s).
	Rescan time.Duration
}

// Watcher refreshes artifacts bound to file connectors when their file
// changes.
type Watcher struct {
	r        *Refresher
	debounce time.Duration
	rescan   time.Duration
}

// NewWatcher returns a watcher over r's memory.
func NewWatcher(r *Refresher, opts *WatcherOptions) *Watcher {
	w := &Watcher{r: r, debounce: 500 * time.Millisecond, rescan: 30 * time.Second}
	if opts != nil {
		if opts.Debounce > 0 {
			w.debounce = opts.Debounce
		}
		if opts.Rescan > 0 {
			w.rescan = opts.Rescan
		}
	}
	return w
}

// watched is a file connector's pattern and the artifacts bound to it.
type watched struct {
	pattern string // absolute path or glob (file name part only)
	bound   []Bound
}

// targets maps each directory to watch to the patterns in it. Only
// connectors whose directory lies inside the data roots are watched.
func (w *Watcher) targets(ctx context.Context) map[string][]watched {
	bounds, err := w.r.Bindings(ctx)
	if err != nil {
		return nil
	}
	byPattern := map[string]*watched{}
	for _, b := range bounds {
		c, err := w.r.ReadConnector(ctx, b.Workspace, b.Binding.Connector)
		if err != nil || c.Kind != KindFile || !filepath.IsAbs(c.Path) {
			continue
		}
		if w.r.opts.Access.CheckDir(filepath.Dir(c.Path)) != nil {
			continue
		}
		p := byPattern[c.Path]
		if p == nil {
			p = &watched{pattern: c.Path}
			byPattern[c.Path] = p
		}
		p.bound = append(p.bound, b)
	}
	out := map[string][]watched{}
	for _, p := range byPattern {
		dir := filepath.Dir(p.pattern)
		out[dir] = append(out[dir], *p)
	}
	return out
}

// Run watches until ctx ends. Events on a file matching a connector's
// path, once quiet for the debounce time, refresh every artifact bound to
// it (trigger "watch").
func (w *Watcher) Run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer fw.Close()
	var (
		mu      sync.Mutex
		targets map[string][]watched
		dirs    = map[string]bool{}
		timers  = map[string]*time.Timer{} // by pattern
		stopped bool                       // set when ctx ends; no refresh starts after
		wg      sync.WaitGroup
	)
	defer wg.Wait()
	scan := func() {
		t := w.targets(ctx)
		mu.Lock()
		defer mu.Unlock()
		targets = t
		for d := range dirs {
			if _, ok := t[d]; !ok {
				_ = fw.Remove(d)
				delete(dirs, d)
			}
		}
		for d := range t {
			if !dirs[d] && fw.Add(d) == nil {
				dirs[d] = true
			}
		}
	}
	fire := func(p watched) {
		mu.Lock()
		delete(timers, p.pattern)
		if stopped {
			mu.Unlock()
			return
		}
		wg.Add(1)
		mu.Unlock()
		defer wg.Done()
		for _, b := range p.bound {
			if ctx.Err() != nil {
				return
			}
			_, _ = w.r.Refresh(ctx, Request{Workspace: b.Workspace, Artifact: b.Artifact, Trigger: "watch"})
		}
	}
	scan()
	tick := time.NewTicker(w.rescan)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			mu.Lock()
			stopped = true
			for _, t := range timers {
				t.Stop()
			}
			mu.Unlock()
			return nil
		case <-tick.C:
			scan()
		case err := <-fw.Errors:
			w.r.log.Warn("refresh: watching data files", "err", err)
		case ev := <-fw.Events:
			if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) && !ev.Has(fsnotify.Rename) && !ev.Has(fsnotify.Remove) {
				continue
			}
			mu.Lock()
			for _, p := range targets[filepath.Dir(ev.Name)] {
				if ok, _ := filepath.Match(p.pattern, ev.Name); !ok {
					continue
				}
				if t := timers[p.pattern]; t != nil {
					t.Reset(w.debounce)
					continue
				}
				timers[p.pattern] = time.AfterFunc(w.debounce, func() { fire(p) })
			}
			mu.Unlock()
		}
	}
}
