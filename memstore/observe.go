package memstore

import (
	"context"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxLagWalk bounds the commits IndexLags walks back from HEAD looking for
// an index's commit; an index further behind reports its lag as unknown.
const maxLagWalk = 10000

// Observer receives measurements of the store's work, e.g. for metrics.
// Its methods are called synchronously on the caller's goroutine and must
// be fast and safe for concurrent use.
type Observer interface {
	// Searched reports one search that reached the indexes.
	Searched(SearchEvent)
}

// SearchEvent describes one search.
type SearchEvent struct {
	Duration time.Duration
	// Fallback is set when the primary index failed and the local
	// fallback index was searched instead.
	Fallback bool
	Err      error
}

// IndexLag is how far one index is behind the memory's HEAD.
type IndexLag struct {
	Index int // 0 for the primary index, 1 for the local fallback
	// Commits is the number of commits HEAD is ahead of the commit the
	// index records; -1 when unknown: nothing indexed, a commit not in
	// HEAD's recent history (it will be rebuilt), or the index could not
	// be read (Err).
	Commits int
	// Since is the time of the oldest commit the index lacks; zero when
	// the index is current or its lag is unknown.
	Since time.Time
	Err   error
}

// IndexLags reports, for each configured index, how far it is behind HEAD,
// as the index itself records it (so commits made by another process
// count until this or that process catches the index up).
func (s *Store) IndexLags(ctx context.Context) ([]IndexLag, error) {
	head, err := s.git.headCommit()
	if err != nil {
		return nil, err
	}
	out := make([]IndexLag, len(s.mirrors))
	for i, m := range s.mirrors {
		out[i] = IndexLag{Index: i, Commits: -1}
		st, err := m.idx.State(ctx)
		if err != nil {
			out[i].Err = err
			continue
		}
		if st.Commit == "" {
			continue
		}
		out[i].Commits, out[i].Since = s.behind(head, plumbing.NewHash(st.Commit))
	}
	return out, nil
}

// behind counts the first-parent commits from head back to indexed, and
// returns the time of the oldest of them; -1 when indexed is not found.
func (s *Store) behind(head *object.Commit, indexed plumbing.Hash) (int, time.Time) {
	var since time.Time
	c := head
	for n := 0; n < maxLagWalk && c != nil; n++ {
		if c.Hash == indexed {
			return n, since
		}
		since = c.Committer.When
		if len(c.ParentHashes) == 0 {
			break
		}
		p, err := object.GetCommit(s.git.repo.Storer, c.ParentHashes[0])
		if err != nil {
			break
		}
		c = p
	}
	return -1, time.Time{}
}
