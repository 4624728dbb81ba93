package refresh

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/selmem/selmem/memstore"
)

// Bound is an artifact with its binding, as found in the memory.
type Bound struct {
	Workspace string
	Artifact  string
	Binding   *Binding
}

// Bindings lists every artifact of every workspace that has a valid
// binding.yaml, sorted. Artifacts whose binding does not parse are left
// out.
func (r *Refresher) Bindings(ctx context.Context) ([]Bound, error) {
	wss, err := r.store.List(ctx, memstore.Root+"/workspaces")
	if errors.Is(err, memstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Bound
	for _, ws := range wss {
		if !ws.IsDir {
			continue
		}
		arts, err := r.store.List(ctx, ws.Path+"/artifacts")
		if err != nil {
			continue
		}
		for _, a := range arts {
			if !a.IsDir || CheckArtifact(ws.Name, a.Name) != nil {
				continue
			}
			if b, err := r.ReadBinding(ctx, ws.Name, a.Name); err == nil {
				out = append(out, Bound{Workspace: ws.Name, Artifact: a.Name, Binding: b})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Workspace != out[j].Workspace {
			return out[i].Workspace < out[j].Workspace
		}
		return out[i].Artifact < out[j].Artifact
	})
	return out, nil
}

// SchedulerOptions configure a Scheduler. Nil fields take real time.
type SchedulerOptions struct {
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
	// Rescan is how often the memory is read again for new or changed
	// schedules (default 1 minute).
	Rescan time.Duration
}

// Scheduler refreshes artifacts on their bindings' cron schedules.
type Scheduler struct {
	r      *Refresher
	now    func() time.Time
	after  func(time.Duration) <-chan time.Time
	rescan time.Duration

	mu   sync.Mutex
	next map[[2]string]planned // by workspace, artifact
}

type planned struct {
	schedule string
	at       time.Time
}

// NewScheduler returns a scheduler over r's memory.
func NewScheduler(r *Refresher, opts *SchedulerOptions) *Scheduler {
	s := &Scheduler{r: r, now: time.Now, after: time.After, rescan: time.Minute, next: map[[2]string]planned{}}
	if opts != nil {
		if opts.Now != nil {
			s.now = opts.Now
		}
		if opts.After != nil {
			s.after = opts.After
		}
		if opts.Rescan > 0 {
			s.rescan = opts.Rescan
		}
	}
	return s
}

// NextRun is the next scheduled refresh of an artifact; ok is false when
// it has no schedule (or the scheduler has not seen it).
func (s *Scheduler) NextRun(ws, artifact string) (time.Time, bool) {
	if s == nil {
		return time.Time{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.next[[2]string{ws, artifact}]
	return p.at, ok
}

// RunOnce reads the schedules and runs, one after another, every refresh
// that is due; it returns the artifacts it refreshed (successfully or
// not) and when the next one is due (zero: none scheduled).
func (s *Scheduler) RunOnce(ctx context.Context) (ran []Bound, next time.Time) {
	bounds, err := s.r.Bindings(ctx)
	if err != nil {
		s.r.log.Warn("refresh: reading the bindings failed", "err", err)
	}
	now := s.now()
	s.mu.Lock()
	seen := map[[2]string]bool{}
	var due []Bound
	for _, b := range bounds {
		if b.Binding.Schedule == "" {
			continue
		}
		k := [2]string{b.Workspace, b.Artifact}
		seen[k] = true
		sched, err := cronParser.Parse(b.Binding.Schedule)
		if err != nil {
			continue
		}
		p, ok := s.next[k]
		if !ok || p.schedule != b.Binding.Schedule {
			p = planned{schedule: b.Binding.Schedule, at: nextAfter(sched, now)}
		}
		if !p.at.After(now) {
			due = append(due, b)
			p.at = nextAfter(sched, now)
		}
		s.next[k] = p
	}
	for k := range s.next {
		if !seen[k] {
			delete(s.next, k)
		}
	}
	for _, p := range s.next {
		if next.IsZero() || p.at.Before(next) {
			next = p.at
		}
	}
	s.mu.Unlock()
	for _, b := range due {
		if ctx.Err() != nil {
			break
		}
		// The outcome is recorded in the artifact's status.
		_, _ = s.r.Refresh(ctx, Request{Workspace: b.Workspace, Artifact: b.Artifact, Trigger: "schedule"})
		ran = append(ran, b)
	}
	return ran, next
}

// nextAfter is the schedule's first time after now, in UTC.
func nextAfter(sched cron.Schedule, now time.Time) time.Time {
	return sched.Next(now.UTC())
}

// Run runs scheduled refreshes until ctx ends, waking at the next due
// time or every Rescan to pick up changed schedules.
func (s *Scheduler) Run(ctx context.Context) {
	for {
		_, next := s.RunOnce(ctx)
		wait := s.rescan
		if !next.IsZero() {
			wait = min(wait, max(next.Sub(s.now()), 0))
		}
		select {
		case <-ctx.Done():
			return
		case <-s.after(wait):
		}
	}
}
