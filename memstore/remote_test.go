package memstore_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// replicaOpts configure openReplica.
type replicaOpts struct {
	index bool // an embedded SQLite index in the home
	wrap  func(memstore.Index) memstore.Index
	feed  memstore.ChangeFeed // the remote's feed
	poll  time.Duration
	set   func(*memstore.Options) // changes the options, e.g. a test hook
}

// openReplica opens the store at home as a replica of the remote at url.
func openReplica(t testing.TB, home, url string, o replicaOpts) (*memstore.Store, error) {
	t.Helper()
	opts := &memstore.Options{
		Now:        func() time.Time { return fixedNow },
		Durability: memstore.DurabilityOS,
		Remote:     &memstore.Remote{URL: url, Feed: o.feed, Poll: o.poll},
	}
	if os.Getenv("SELMEM_TEST_LOG") != "" {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if o.index || o.wrap != nil {
		idx, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
		if err != nil {
			t.Fatalf("open index: %v", err)
		}
		t.Cleanup(func() { idx.Close() })
		var i memstore.Index = idx
		if o.wrap != nil {
			i = o.wrap(idx)
		}
		opts.Index, opts.Embedder = i, embedder.NewBuiltin()
	}
	if o.set != nil {
		o.set(opts)
	}
	s, err := memstore.Open(context.Background(), home, opts)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, nil
}

// TestRemote_FetchOnFullDisk: a sync whose fetched objects this home
// cannot store (a full disk) says so, not that the remote cannot be
// reached, names no host path, and changes nothing locally; once the
// objects can be stored, the same sync catches up.
func TestRemote_FetchOnFullDisk(t *testing.T) {
	srv := gittest.NewServer(t)
	var full atomic.Bool
	a := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{set: func(o *memstore.Options) {
		memstore.FailObjectWrites(o, func() error {
			if full.Load() {
				return &fs.PathError{Op: "write", Path: "/home/alice/.selmem/memory/.git/objects/ab/cdef", Err: syscall.ENOSPC}
			}
			return nil
		})
	}})
	b := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
	const p = "/memories/notes/from-b.md"
	mustCreate(t, b, p, "# From b\n")
	before, err := a.Head()
	if err != nil {
		t.Fatal(err)
	}

	full.Store(true)
	_, err = a.Sync(context.Background())
	if !errors.Is(err, memstore.ErrUnavailable) {
		t.Fatalf("Sync on a full disk = %v, want ErrUnavailable", err)
	}
	msg := err.Error()
	for _, want := range []string{"could not store what the memory's remote sent", "no space left on device", "Free space"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	for _, not := range []string{"cannot be reached", "/home/alice"} {
		if strings.Contains(msg, not) {
			t.Errorf("error %q holds %q", msg, not)
		}
	}
	if after, _ := a.Head(); after != before {
		t.Errorf("the failed sync moved the branch from %s to %s", before, after)
	}
	if _, err := a.View(context.Background(), p, nil); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("View(%s) after the failed sync = %v, want ErrNotFound", p, err)
	}

	full.Store(false)
	if _, err := a.Sync(context.Background()); err != nil {
		t.Fatalf("Sync once there is room: %v", err)
	}
	if _, err := a.View(context.Background(), p, nil); err != nil {
		t.Errorf("View(%s) after the sync: %v", p, err)
	}
}

// mustReplica is openReplica failing the test on error.
func mustReplica(t testing.TB, home, url string, o replicaOpts) *memstore.Store {
	t.Helper()
	s, err := openReplica(t, home, url, o)
	if err != nil {
		t.Fatalf("open replica: %v", err)
	}
	return s
}

func TestRemote_OpenClonesOrPushes(t *testing.T) {
	for _, tt := range []struct {
		name string
		url  func(srv *gittest.Server) string
	}{
		{"http", func(srv *gittest.Server) string { return srv.URL }},
		{"file", func(srv *gittest.Server) string { return "file://" + srv.Dir }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := gittest.NewServer(t)
			testOpenClonesOrPushes(t, srv, tt.url(srv))
		})
	}
}

func testOpenClonesOrPushes(t *testing.T, srv *gittest.Server, url string) {
	ctx := context.Background()
	// The first replica finds an empty remote: it creates the memory and
	// pushes it.
	a := mustReplica(t, t.TempDir(), url, replicaOpts{index: true})
	if got, want := srv.Head(t, "main"), mustHead(t, a); got != want {
		t.Fatalf("remote head after init = %q, want the new memory's %q", got, want)
	}
	mustCreate(t, a, "/memories/notes/a.md", "# A\n\nalpha replicated text\n")
	if got, want := srv.Head(t, "main"), mustHead(t, a); got != want {
		t.Fatalf("remote head after a write = %q, want %q", got, want)
	}
	// The second clones it: same head, same files, and its index finds them.
	homeB := t.TempDir()
	b := mustReplica(t, homeB, url, replicaOpts{index: true})
	if got, want := mustHead(t, b), mustHead(t, a); got != want {
		t.Fatalf("clone head = %q, want %q", got, want)
	}
	data, err := os.ReadFile(filepath.Join(homeB, "memory", "notes", "a.md"))
	if err != nil || !strings.Contains(string(data), "alpha replicated") {
		t.Fatalf("cloned working file: %q, %v", data, err)
	}
	res, err := b.Search(ctx, memstore.SearchRequest{Query: "alpha replicated"})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search on the clone: %+v, %v", res, err)
	}
	st, err := b.RemoteStatus(ctx)
	if err != nil || st.RemoteHead != mustHead(t, b) || st.Behind != 0 || st.LastError != "" || st.Branch != "main" {
		t.Fatalf("RemoteStatus = %+v, %v", st, err)
	}
}

// writeOffline makes home a replica of srv, then commits to it without the
// remote configured: a write acknowledged before replication was set up.
func writeOffline(t *testing.T, srv *gittest.Server, home string) {
	t.Helper()
	ctx := context.Background()
	mustReplica(t, home, srv.URL, replicaOpts{}).Close(ctx)
	local, err := memstore.Open(ctx, home, &memstore.Options{Durability: memstore.DurabilityOS})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, local, "/memories/notes/offline.md", "written offline\n")
	local.Close(ctx)
}

func TestRemote_OpenExistingRepository(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		prepare func(t *testing.T, srv *gittest.Server, home string) // leaves a repository at home
		wantErr bool
	}{
		{
			name: "strictly ahead pushes",
			prepare: func(t *testing.T, srv *gittest.Server, home string) {
				writeOffline(t, srv, home)
			},
		},
		{
			name: "behind fast-forwards",
			prepare: func(t *testing.T, srv *gittest.Server, home string) {
				s := mustReplica(t, home, srv.URL, replicaOpts{})
				s.Close(ctx)
				other := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
				mustCreate(t, other, "/memories/notes/other.md", "written elsewhere\n")
			},
		},
		{
			name: "diverged refuses",
			prepare: func(t *testing.T, srv *gittest.Server, home string) {
				writeOffline(t, srv, home)
				other := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
				mustCreate(t, other, "/memories/notes/other.md", "written elsewhere\n")
			},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := gittest.NewServer(t)
			home := t.TempDir()
			tt.prepare(t, srv, home)
			s, err := openReplica(t, home, srv.URL, replicaOpts{})
			if tt.wantErr {
				if err == nil || !errors.Is(err, memstore.ErrConflict) || !strings.Contains(err.Error(), "diverged") {
					t.Fatalf("Open = %v, want a diverged error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got, want := srv.Head(t, "main"), mustHead(t, s); got != want {
				t.Fatalf("remote %q, local %q: not level", got, want)
			}
			srv.Git(t, "fsck", "--strict")
		})
	}
}

func TestRemote_Unreachable(t *testing.T) {
	ctx := context.Background()
	srv := gittest.NewServer(t)
	home := t.TempDir()
	s := mustReplica(t, home, srv.URL, replicaOpts{index: true})
	mustCreate(t, s, "/memories/notes/kept.md", "# Kept\n\nbefore the outage\n")
	s.Close(ctx)
	srv.SetDown(true)
	// Open still works on the local copy.
	s = mustReplica(t, home, srv.URL, replicaOpts{index: true})
	before := mustHead(t, s)
	_, err := s.Create(ctx, "/memories/notes/lost.md", "during the outage\n", nil)
	if !errors.Is(err, memstore.ErrUnavailable) || !strings.Contains(err.Error(), "cannot be reached") {
		t.Fatalf("Create during the outage = %v, want ErrUnavailable", err)
	}
	if got := mustHead(t, s); got != before {
		t.Fatalf("head moved to %s after a failed write", got)
	}
	if _, err := os.Stat(filepath.Join(home, "memory", "notes", "lost.md")); !os.IsNotExist(err) {
		t.Fatalf("a failed write left its working file: %v", err)
	}
	if _, _, err := s.Read(ctx, "/memories/notes/kept.md"); err != nil {
		t.Fatalf("Read during the outage: %v", err)
	}
	if res, err := s.Search(ctx, memstore.SearchRequest{Query: "outage"}); err != nil || len(res.Hits) != 1 || res.Hits[0].Path != "/memories/notes/kept.md" {
		t.Fatalf("Search during the outage = %+v, %v", res, err)
	}
	if st, _ := s.RemoteStatus(ctx); st.LastError == "" {
		t.Fatalf("RemoteStatus.LastError is empty during the outage")
	}
	srv.SetDown(false)
	mustCreate(t, s, "/memories/notes/back.md", "after the outage\n")
	if got, want := srv.Head(t, "main"), mustHead(t, s); got != want {
		t.Fatalf("remote %q, local %q after the outage", got, want)
	}
	if out := srv.Git(t, "log", "--format=%s", "main"); strings.Contains(out, "lost.md") {
		t.Fatalf("the failed write reached the remote:\n%s", out)
	}
}

func TestRemote_OpenUnreachableWithoutCopy(t *testing.T) {
	srv := gittest.NewServer(t)
	mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
	srv.SetDown(true)
	_, err := openReplica(t, t.TempDir(), srv.URL, replicaOpts{})
	if !errors.Is(err, memstore.ErrUnavailable) {
		t.Fatalf("Open of a new home with the remote down = %v, want ErrUnavailable", err)
	}
}

// TestRemote_PushIsCompareAndSwap checks what goes over the wire: each push
// names the commit its write was prepared on, the server refuses it when
// the branch moved, and the write is prepared again on the new head.
func TestRemote_PushIsCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	srv := gittest.NewServer(t)
	a := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
	b := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
	w1 := mustCreate(t, b, "/memories/notes/one.md", "one\n").Commit
	if _, err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	w2 := mustCreate(t, a, "/memories/notes/two.md", "two\n").Commit
	// b has not seen w2: its push names w1 and the server refuses it.
	before := len(srv.Updates())
	w3 := mustCreate(t, b, "/memories/notes/three.md", "three\n").Commit
	ups := srv.Updates()[before:]
	if len(ups) != 2 {
		t.Fatalf("pushes of the third write = %+v, want a refused one and a retried one", ups)
	}
	if ups[0].Old != w1 {
		t.Errorf("first push expected %s, want w1 %s", ups[0].Old, w1)
	}
	if ups[1].Old != w2 || ups[1].New != w3 {
		t.Errorf("retried push %+v, want %s -> %s", ups[1], w2, w3)
	}
	history := srv.Git(t, "rev-list", "main")
	if strings.Contains(history, ups[0].New) {
		t.Errorf("the refused commit %s is in the remote's history", ups[0].New)
	}
	if got, want := srv.Git(t, "rev-parse", w3+"^"), w2; got != want {
		t.Errorf("the third write's parent = %s, want w2 %s", got, want)
	}
	if got := srv.Git(t, "show", "main:notes/two.md"); got != "two" {
		t.Errorf("two.md at the remote = %q", got)
	}
}

// TestRemote_ReapplyFailsHonestly: a write prepared on a stale head is
// prepared again through the write gate on the remote's head, and fails
// there when its precondition is gone, writing nothing.
func TestRemote_ReapplyFailsHonestly(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		first   func(s *memstore.Store) error // by the replica that wins
		second  func(s *memstore.Store) error // by the stale one
		wantErr error
		wantMsg string
	}{
		{
			name: "create of a path created meanwhile",
			first: func(s *memstore.Store) error {
				_, err := s.Create(ctx, "/memories/notes/x.md", "first\n", nil)
				return err
			},
			second: func(s *memstore.Store) error {
				_, err := s.Create(ctx, "/memories/notes/x.md", "second\n", nil)
				return err
			},
			wantErr: memstore.ErrExists,
			wantMsg: "already exists",
		},
		{
			name: "str_replace whose old_str was replaced meanwhile",
			first: func(s *memstore.Store) error {
				_, err := s.StrReplace(ctx, "/memories/notes/base.md", "v1", "v2", nil)
				return err
			},
			second: func(s *memstore.Store) error {
				_, err := s.StrReplace(ctx, "/memories/notes/base.md", "v1", "v3", nil)
				return err
			},
			wantErr: memstore.ErrNotFound,
			wantMsg: "did not appear verbatim",
		},
		{
			// Same author, clock, file and edit on the same head: the
			// same commit. The server refuses the stale push, though its
			// branch names that commit; the write is still not the one
			// that landed.
			name: "the identical str_replace made meanwhile",
			first: func(s *memstore.Store) error {
				_, err := s.StrReplace(ctx, "/memories/notes/base.md", "v1", "v2", nil)
				return err
			},
			second: func(s *memstore.Store) error {
				_, err := s.StrReplace(ctx, "/memories/notes/base.md", "v1", "v2", nil)
				return err
			},
			wantErr: memstore.ErrNotFound,
			wantMsg: "did not appear verbatim",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := gittest.NewServer(t)
			a := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
			b := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
			// b has pushed before, so it knows the server and its next
			// push is one request, the server checking the old commit.
			mustCreate(t, b, "/memories/notes/base.md", "v1\n")
			if _, err := a.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if err := tt.first(a); err != nil {
				t.Fatal(err)
			}
			want := srv.Head(t, "main")
			err := tt.second(b)
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("stale write = %v, want %v", err, tt.wantErr)
			}
			if got := srv.Head(t, "main"); got != want {
				t.Fatalf("the refused write moved the remote to %s", got)
			}
			if got := mustHead(t, b); got != want {
				t.Fatalf("the stale replica is at %s after the re-apply, want the remote's %s", got, want)
			}
		})
	}
}
