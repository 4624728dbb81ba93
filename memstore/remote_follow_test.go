package memstore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// chanFeed is a ChangeFeed over channels within the process: the other
// side of the contract pgindex implements with NOTIFY/LISTEN.
type chanFeed struct {
	mu         sync.Mutex
	subs       []chan string
	subscribed chan struct{} // closed at the first Subscribe
}

func newChanFeed() *chanFeed { return &chanFeed{subscribed: make(chan struct{})} }

func (f *chanFeed) Publish(_ context.Context, commit string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.subs {
		select {
		case ch <- commit:
		default:
		}
	}
	return nil
}

func (f *chanFeed) Subscribe(ctx context.Context, fn func(commit string)) error {
	ch := make(chan string, 64)
	f.mu.Lock()
	f.subs = append(f.subs, ch)
	if len(f.subs) == 1 {
		close(f.subscribed)
	}
	f.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return nil
		case c := <-ch:
			fn(c)
		}
	}
}

// waitLong bounds a wait for something that must happen; it is a guard
// against hanging, not a measurement.
const waitLong = 2 * time.Minute

func TestRemote_Follow(t *testing.T) {
	tests := []struct {
		name   string
		feed   bool          // the follower is told through the feed
		poll   time.Duration // else it polls
		outage bool          // the remote is down when Follow starts
	}{
		{name: "notification", feed: true, poll: time.Hour},
		{name: "poll", poll: 20 * time.Millisecond},
		{name: "poll after an outage", poll: 20 * time.Millisecond, outage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := gittest.NewServer(t)
			feed := newChanFeed()
			writer := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{feed: feed})
			o := replicaOpts{index: true, poll: tt.poll}
			if tt.feed {
				o.feed = feed
			}
			follower := mustReplica(t, t.TempDir(), srv.URL, o)
			changed := make(chan []string, 16)
			if tt.outage {
				srv.SetDown(true)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- follower.Follow(ctx, func(paths []string) { changed <- paths }) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Follow = %v", err)
				}
			}()
			if tt.feed {
				<-feed.subscribed
			}
			if tt.outage {
				// Follow keeps going through failed syncs.
				give := time.Now().Add(waitLong)
				for st, _ := follower.RemoteStatus(ctx); st.LastError == "" && time.Now().Before(give); st, _ = follower.RemoteStatus(ctx) {
					time.Sleep(10 * time.Millisecond)
				}
				srv.SetDown(false)
			}
			mustCreate(t, writer, "/memories/notes/followed.md", "# Followed\n\nfollowedword\n")
			select {
			case paths := <-changed:
				if !slices.Equal(paths, []string{"/memories/notes/followed.md"}) {
					t.Fatalf("onChange(%q), want the written path", paths)
				}
			case <-time.After(waitLong):
				t.Fatal("the follower never synced")
			}
			if got, want := mustHead(t, follower), mustHead(t, writer); got != want {
				t.Fatalf("follower at %s, writer at %s", got, want)
			}
			if !found(t, follower, "followedword", "/memories/notes/followed.md") {
				t.Fatal("the follower's index does not find the followed write")
			}
		})
	}
}

// TestRemote_RestartBehind restarts a replica whose local branch is behind
// the remote (it died after pushing, before its branch moved, or others
// wrote while it was down): Open catches up.
func TestRemote_RestartBehind(t *testing.T) {
	ctx := context.Background()
	srv := gittest.NewServer(t)
	home := t.TempDir()
	s := mustReplica(t, home, srv.URL, replicaOpts{index: true})
	mustCreate(t, s, "/memories/notes/one.md", "# One\n\nfirstword\n")
	mustCreate(t, s, "/memories/notes/two.md", "# Two\n\nsecondword\n")
	s.Close(ctx)
	// The branch goes back one commit and the last file is gone, as if the
	// process had died between the push and the move of its branch.
	repo := filepath.Join(home, "memory")
	if out, err := exec.Command("git", "-C", repo, "update-ref", "refs/heads/main", "main~1").CombinedOutput(); err != nil {
		t.Fatalf("update-ref: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", repo, "rm", "-q", "--cached", "notes/two.md").CombinedOutput(); err != nil {
		t.Fatalf("git rm: %v\n%s", err, out)
	}
	if err := removeFile(filepath.Join(repo, "notes", "two.md")); err != nil {
		t.Fatal(err)
	}
	s = mustReplica(t, home, srv.URL, replicaOpts{index: true})
	if got, want := mustHead(t, s), srv.Head(t, "main"); got != want {
		t.Fatalf("after restart at %s, remote at %s", got, want)
	}
	if _, _, err := s.Read(ctx, "/memories/notes/two.md"); err != nil {
		t.Fatalf("the caught-up file: %v", err)
	}
	if !found(t, s, "secondword", "/memories/notes/two.md") {
		t.Fatal("the index does not find the caught-up file")
	}
}

// sharedIndex is a SharedIndex over one embedded index that several stores
// of the process share, counting the index work each path gets.
type sharedIndex struct {
	memstore.Index
	work   *indexWork
	before func() // runs (once) before Exclusive, when set
}

// indexWork is what the shared index was asked to do.
type indexWork struct {
	exclusive sync.Mutex // Exclusive across the stores
	mu        sync.Mutex
	replaces  map[string]int
	resets    int
}

func (s *sharedIndex) Exclusive(ctx context.Context, fn func(ctx context.Context) error) error {
	if f := s.before; f != nil {
		s.before = nil
		f()
	}
	s.work.exclusive.Lock()
	defer s.work.exclusive.Unlock()
	return fn(ctx)
}

func (s *sharedIndex) Replace(ctx context.Context, path string, chunks []memstore.Chunk) error {
	s.work.mu.Lock()
	s.work.replaces[path]++
	s.work.mu.Unlock()
	return s.Index.Replace(ctx, path, chunks)
}

func (s *sharedIndex) Reset(ctx context.Context, st memstore.IndexState) error {
	s.work.mu.Lock()
	s.work.resets++
	s.work.mu.Unlock()
	return s.Index.Reset(ctx, st)
}

var _ memstore.SharedIndex = (*sharedIndex)(nil)

// sharedReplicas opens n replicas of the remote srv sharing one embedded
// index, each through a sharedIndex of its own counting, with the others,
// the work done on it.
func sharedReplicas(t *testing.T, srv *gittest.Server, n int) ([]*memstore.Store, []*sharedIndex) {
	t.Helper()
	idx, err := sqliteindex.Open(filepath.Join(t.TempDir(), "shared.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	work := &indexWork{replaces: map[string]int{}}
	stores, wraps := make([]*memstore.Store, n), make([]*sharedIndex, n)
	for i := range stores {
		w := &sharedIndex{Index: idx, work: work}
		stores[i], wraps[i] = mustReplica(t, t.TempDir(), srv.URL, replicaOpts{wrap: func(memstore.Index) memstore.Index { return w }}), w
	}
	return stores, wraps
}

// TestRemote_SharedIndexOnce shares one index between two replicas: each
// write's index work happens once, whichever replica does it; a replica
// that finds the index past its commit does nothing; nothing is rebuilt
// because the other replica is ahead.
func TestRemote_SharedIndexOnce(t *testing.T) {
	ctx := context.Background()
	srv := gittest.NewServer(t)
	replicas, wraps := sharedReplicas(t, srv, 2)
	a, b, wb, work := replicas[0], replicas[1], wraps[1], wraps[0].work

	var paths []string
	write := func(s *memstore.Store, n int) {
		t.Helper()
		p := fmt.Sprintf("/memories/notes/shared%d.md", n)
		mustCreate(t, s, p, fmt.Sprintf("# Shared\n\nsharedword%d\n", n))
		paths = append(paths, p)
	}
	write(a, 1)
	if _, err := b.Sync(ctx); err != nil { // the index is already there
		t.Fatal(err)
	}
	write(b, 2)
	write(a, 3) // pushed after a fetch: a catches up with b's write first
	// b's next write: after its push and before its own index update, a
	// catches up (indexing b's write) and writes again, so b finds the
	// index past its commit, at a commit it has not fetched yet.
	if _, err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	wb.before = func() {
		if _, err := a.Sync(ctx); err != nil {
			t.Error(err)
		}
		write(a, 5)
	}
	write(b, 4)
	for _, s := range []*memstore.Store{a, b} {
		if _, err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if work.resets != 1 {
		t.Errorf("the shared index was reset %d times, want 1 (the first open)", work.resets)
	}
	for _, p := range paths {
		if n := work.replaces[p]; n != 1 {
			t.Errorf("%s was indexed %d times, want 1", p, n)
		}
	}
	for i, s := range []*memstore.Store{a, b} {
		for n := 1; n <= 5; n++ {
			if !found(t, s, fmt.Sprintf("sharedword%d", n), fmt.Sprintf("/memories/notes/shared%d.md", n)) {
				t.Errorf("replica %d does not find write %d", i, n)
			}
		}
	}
}

func removeFile(p string) error { return os.Remove(p) }

// TestRemote_SharedIndexTakesTurns: replicas that share an index take
// turns to write. A write on a replica behind the remote catches up
// before it pushes, and writers on every replica at once push one after
// another, so that no push of theirs loses the race for the remote's
// branch (a losing replica could otherwise keep losing to one whose
// writes keep landing).
func TestRemote_SharedIndexTakesTurns(t *testing.T) {
	srv := gittest.NewServer(t)
	stores, _ := sharedReplicas(t, srv, 3)
	start := len(srv.Updates())

	mustCreate(t, stores[0], "/memories/notes/first.md", "# First\n")
	mustCreate(t, stores[1], "/memories/notes/second.md", "# Second\n") // a write behind the remote
	const writers, writes = 3, 4
	var wg sync.WaitGroup
	for i, s := range stores {
		for w := range writers {
			wg.Go(func() {
				for n := range writes {
					p := fmt.Sprintf("/memories/notes/r%d-w%d-%d.md", i, w, n)
					if _, err := s.Create(context.Background(), p, "# Note\n", nil); err != nil {
						t.Errorf("Create(%s): %v", p, err)
					}
				}
			})
		}
	}
	wg.Wait()

	ups := srv.Updates()[start:]
	if got, want := len(ups), 2+len(stores)*writers*writes; got != want {
		t.Errorf("%d pushes for %d writes, want one each", got, want)
	}
	for i := 1; i < len(ups); i++ {
		if ups[i].Old != ups[i-1].New {
			t.Errorf("push %d lost the race: prepared on %.12s, the remote was at %.12s", i, ups[i].Old, ups[i-1].New)
		}
	}
	if got, want := srv.Head(t, "main"), ups[len(ups)-1].New; got != want {
		t.Errorf("the remote is at %s, the last push was %s", got, want)
	}
}

// TestRemote_SharedIndexAheadServesOnlyHead: a replica behind a shared
// index that another replica moved ahead answers for its own head. A file
// the other replica wrote after taking the viewer's role away is not
// served to that viewer through the index; what the replica's head still
// grants is.
func TestRemote_SharedIndexAheadServesOnlyHead(t *testing.T) {
	ctx := context.Background()
	srv := gittest.NewServer(t)
	replicas, _ := sharedReplicas(t, srv, 2)
	a, b := replicas[0], replicas[1]
	const acl = "/memories/workspaces/secret/workspace.yaml"
	mustCreate(t, a, acl, "acl:\n  owners: [olga]\n  viewers: [vic]\n")
	mustCreate(t, a, "/memories/workspaces/secret/old.md", "# Old\n\n- zorblax kickoff notes.\n")
	if _, err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.StrReplace(ctx, acl, "\n  viewers: [vic]", "", nil); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, a, "/memories/workspaces/secret/new.md", "# New\n\n- zorblax layoffs on June 1.\n")

	vic := access.WithPrincipal(ctx, access.Principal{User: "vic", Kind: access.KindPerson})
	for _, tt := range []struct {
		name string
		s    *memstore.Store
		want []string
	}{
		{"replica behind", b, []string{"/memories/workspaces/secret/old.md"}},
		{"replica level", a, nil},
	} {
		res, err := tt.s.Search(vic, memstore.SearchRequest{Query: "zorblax", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.Path)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: vic finds %v, want %v", tt.name, got, tt.want)
		}
	}
}
