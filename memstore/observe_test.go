package memstore_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// searches records the observed searches.
type searches struct {
	mu     sync.Mutex
	events []memstore.SearchEvent
}

func (s *searches) Searched(e memstore.SearchEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

// TestStore_Observer: every search that reaches the indexes is observed,
// and one answered by the fallback during an outage says so; IndexLags
// reports each index's lag behind HEAD, as the index records it.
func TestStore_Observer(t *testing.T) {
	home := t.TempDir()
	open := func(name string) memstore.Index {
		idx, err := sqliteindex.Open(filepath.Join(home, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { idx.Close() })
		return idx
	}
	out := &outageIndex{Index: open("primary.db")}
	obs := &searches{}
	s, err := memstore.Open(context.Background(), home, &memstore.Options{
		Index: out, Fallback: open("fallback.db"), Embedder: embedder.NewBuiltin(),
		Now: func() time.Time { return fixedNow }, Observer: obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mustCreate(t, s, "/memories/workspaces/w/task.md", "# Task\n\n- Refunds take 5 days.\n")

	lags, err := s.IndexLags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(lags) != 2 || lags[0].Commits != 0 || lags[1].Commits != 0 || !lags[0].Since.IsZero() {
		t.Fatalf("lags after a write: %+v, want both indexes current", lags)
	}

	if _, err := s.Search(ctx, memstore.SearchRequest{Query: "refunds"}); err != nil {
		t.Fatal(err)
	}
	out.down = true
	if _, err := s.Search(ctx, memstore.SearchRequest{Query: "refunds"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(ctx, memstore.SearchRequest{Query: "  "}); err == nil {
		t.Fatal("an empty query was accepted")
	}
	if got := len(obs.events); got != 2 {
		t.Fatalf("%d searches observed, want 2 (an invalid request is not a search): %+v", got, obs.events)
	}
	if e := obs.events[0]; e.Fallback || e.Err != nil || e.Duration <= 0 {
		t.Errorf("first search observed as %+v, want the primary answering", e)
	}
	if e := obs.events[1]; !e.Fallback || e.Err != nil {
		t.Errorf("search during the outage observed as %+v, want the fallback answering", e)
	}
	lags, err = s.IndexLags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lags[0].Err == nil || lags[0].Commits != -1 {
		t.Errorf("primary down: lag %+v, want unknown with the error", lags[0])
	}
	out.down = false

	// A commit made outside selmem: both indexes are one commit behind
	// until something catches them up.
	dir := s.Dir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	git("commit", "--allow-empty", "-m", "outside")
	lags, err = s.IndexLags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lags {
		if l.Commits != 1 || l.Since.IsZero() || l.Err != nil {
			t.Errorf("after an outside commit: lag %+v, want 1 commit with its time", l)
		}
	}
	if err := s.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	lags, _ = s.IndexLags(ctx)
	for _, l := range lags {
		if l.Commits != 0 {
			t.Errorf("after Reconcile: lag %+v, want 0", l)
		}
	}
}
