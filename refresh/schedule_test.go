package refresh

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand; After returns a channel the
// test fires with Tick.
type fakeClock struct {
	now   chan time.Time // holds the current time
	after chan chan time.Time
}

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{now: make(chan time.Time, 1), after: make(chan chan time.Time, 16)}
	c.now <- t
	return c
}

func (c *fakeClock) Now() time.Time { t := <-c.now; c.now <- t; return t }

func (c *fakeClock) Set(t time.Time) { <-c.now; c.now <- t }

func (c *fakeClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.after <- ch
	return ch
}

func TestScheduler_RunOnce(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 12, 7, 5, 59, 0, 0, time.UTC)) // a Monday
	f := newFixture(t, &Options{Now: clock.Now})
	p := f.writeData(t, "orders.csv", dataV1)
	f.put(t, map[string]string{
		ConnectorPath("sales", "orders"): "kind: file\npath: " + p + "\n",
		BindingPath("sales", "dash"):     "connector: orders\nschedule: \"0 6 * * 1\"\n",
		BindingPath("sales", "manual"):   "connector: orders\n",
	})
	s := NewScheduler(f.r, &SchedulerOptions{Now: clock.Now})
	if ran, next := s.RunOnce(ctx); len(ran) != 0 || !next.Equal(time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)) {
		t.Fatalf("at 05:59: ran %v, next %v", ran, next)
	}
	clock.Set(time.Date(2026, 12, 7, 6, 0, 1, 0, time.UTC))
	ran, next := s.RunOnce(ctx)
	if len(ran) != 1 || ran[0].Artifact != "dash" {
		t.Fatalf("at 06:00:01 ran %v", ran)
	}
	if want := time.Date(2026, 12, 14, 6, 0, 0, 0, time.UTC); !next.Equal(want) {
		t.Errorf("next = %v, want %v", next, want)
	}
	st, ok := f.r.Snapshots().LastStatus("sales", "dash")
	if !ok || st.Outcome != OutcomeRefreshed || st.Trigger != "schedule" {
		t.Errorf("status = %+v", st)
	}
	if ran, _ := s.RunOnce(ctx); len(ran) != 0 {
		t.Errorf("ran again in the same minute: %v", ran)
	}
	if _, ok := f.r.Snapshots().LastStatus("sales", "manual"); ok {
		t.Error("an artifact without a schedule was refreshed")
	}
}

// TestScheduler_Run drives the loop with the fake clock: the refresh fires
// when the clock passes the scheduled time and the timer goes off.
func TestScheduler_Run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := newFakeClock(time.Date(2026, 12, 1, 23, 59, 30, 0, time.UTC))
	refreshed := make(chan []string, 4)
	f := newFixture(t, &Options{Now: clock.Now, Changed: func(p []string) { refreshed <- p }})
	p := f.writeData(t, "orders.csv", dataV1)
	f.put(t, map[string]string{
		ConnectorPath("sales", "orders"): "kind: file\npath: " + p + "\n",
		BindingPath("sales", "dash"):     "connector: orders\nschedule: \"@daily\"\n",
	})
	s := NewScheduler(f.r, &SchedulerOptions{Now: clock.Now, After: clock.After})
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	timer := <-clock.after // the loop waits for midnight
	select {
	case <-refreshed:
		t.Fatal("refreshed before the scheduled time")
	default:
	}
	clock.Set(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	timer <- clock.Now()
	select {
	case <-refreshed:
	case <-time.After(30 * time.Second):
		t.Fatal("the scheduled refresh did not run")
	}
	<-clock.after
	cancel()
	<-done
}

// TestWatcher refreshes when the watched file is replaced.
func TestWatcher(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	refreshed := make(chan []string, 4)
	f := newFixture(t, &Options{Changed: func(p []string) { refreshed <- p }})
	f.writeData(t, "orders-w1.csv", dataV1)
	f.put(t, map[string]string{
		ConnectorPath("sales", "orders"): "kind: file\npath: " + f.data + "/orders-*.csv\n",
		BindingPath("sales", "dash"):     "connector: orders\n",
	})
	if _, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"}); err != nil {
		t.Fatal(err)
	}
	<-refreshed
	w := NewWatcher(f.r, &WatcherOptions{Debounce: 50 * time.Millisecond})
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	// Replace the file by renaming a new one over it, as a delivery would,
	// until the watcher has picked it up (it may not be watching yet).
	deadline := time.After(30 * time.Second)
	for i := 0; ; i++ {
		tmp := f.writeData(t, ".incoming", dataV2+"3,EMEA,2026-11-12,"+strconv.Itoa(i)+",web\n")
		os.Rename(tmp, f.data+"/orders-w1.csv")
		select {
		case <-refreshed:
			b, _ := f.r.ReadBinding(t.Context(), "sales", "dash")
			st, _ := f.r.Snapshots().LastStatus("sales", "dash")
			if st.Trigger != "watch" || b.Snapshot.Rows < 4 {
				t.Errorf("after the file changed: trigger %s, rows %d", st.Trigger, b.Snapshot.Rows)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			return
		case <-time.After(300 * time.Millisecond):
		case <-deadline:
			t.Fatal("the watcher did not refresh the artifact")
		}
	}
}
