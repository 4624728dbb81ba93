package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/memstore"
)

// lossyRemote is a proxy in front of a git server that, when armed, lets
// the server apply one push and then loses its answer (502), after
// running landed; the next failNext requests fail (503).
type lossyRemote struct {
	url      string
	armed    atomic.Bool
	failNext atomic.Int32
	landed   func()
}

func newLossyRemote(t *testing.T, srv *gittest.Server) *lossyRemote {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	l := &lossyRemote{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.failNext.Load() > 0 {
			l.failNext.Add(-1)
			http.Error(w, "flaky network", http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") && l.armed.CompareAndSwap(true, false) {
			forward.ServeHTTP(httptest.NewRecorder(), r) // the server applies the push
			if l.landed != nil {
				l.landed()
			}
			http.Error(w, "upstream answer lost", http.StatusBadGateway)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	l.url = hs.URL + u.Path
	return l
}

// TestRemote_LostPushAnswer: a push the remote applied but whose answer
// was lost is acknowledged once when the remote's branch shows it, even
// under another replica's commits; and when the remote cannot be asked,
// the refusal says the write may have been made, never that nothing was.
func TestRemote_LostPushAnswer(t *testing.T) {
	const path = "/memories/notes/log.md"
	var otherWrites atomic.Int32
	tests := []struct {
		name string
		// then runs after the push landed, before its answer is lost;
		// other is a replica writing straight to the server.
		then      func(t *testing.T, l *lossyRemote, other *memstore.Store)
		wantErr   string // "" when the write is acknowledged
		wantCount int    // times the write's line is in the remote's file
	}{
		{"branch unchanged", nil, "", 1},
		{"another replica writes on top", func(t *testing.T, _ *lossyRemote, other *memstore.Store) {
			if _, err := other.Sync(context.Background()); err != nil {
				t.Error(err)
			}
			if _, err := other.Create(context.Background(), fmt.Sprintf("/memories/notes/other%d.md", otherWrites.Add(1)), "b\n", nil); err != nil {
				t.Error(err)
			}
		}, "", 1},
		{"the remote cannot be asked", func(_ *testing.T, l *lossyRemote, _ *memstore.Store) { l.failNext.Store(1) },
			"whether the write was made (as commit", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			srv := gittest.NewServer(t)
			l := newLossyRemote(t, srv)
			s := mustReplica(t, t.TempDir(), l.url, replicaOpts{})
			other := mustReplica(t, t.TempDir(), srv.URL, replicaOpts{})
			mustCreate(t, s, path, "start\nv1\n")
			if tt.then != nil {
				l.landed = func() { tt.then(t, l, other) }
			}
			l.armed.Store(true)
			_, err := s.Insert(ctx, path, 1, "PAYMENT-123 sent", nil)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Insert: %v, want it acknowledged", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, memstore.ErrUnavailable)):
				t.Fatalf("Insert: %v, want ErrUnavailable saying %q", err, tt.wantErr)
			}
			if got := strings.Count(srv.Git(t, "show", "main:notes/log.md"), "PAYMENT-123"); got != tt.wantCount {
				t.Errorf("the write's line is in the remote %d times, want %d", got, tt.wantCount)
			}
			// The replica is level with the remote after a sync, and a
			// str_replace whose answer is lost under another write is
			// acknowledged, not failed by its own change.
			if _, err := s.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if tt.then != nil {
				l.landed = func() { tt.then(t, l, other) }
			}
			l.armed.Store(true)
			_, err = s.StrReplace(ctx, path, "v1", "v2", nil)
			remote := srv.Git(t, "show", "main:notes/log.md")
			switch {
			case tt.wantErr == "" && (err != nil || !strings.Contains(remote, "v2")):
				t.Errorf("StrReplace: %v, remote file %q; want it acknowledged and made", err, remote)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("StrReplace: %v, want %q", err, tt.wantErr)
			}
		})
	}
}
