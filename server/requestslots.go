package server

import "sync"

// requestSlots caps the POST requests being handled at once: all of them
// (http.max_requests) and each principal's (http.max_requests_per_principal).
// A slot is taken before the body is read and held until the answer is
// written, so the cap bounds the request bodies held in memory and the
// tool calls running, and one principal's burst cannot take every slot of
// a shared server.
type requestSlots struct {
	max, perPrincipal int

	mu    sync.Mutex
	total int
	by    map[string]int // slots held, by sessionOwner; absent when none
}

func newRequestSlots(max, perPrincipal int) *requestSlots {
	return &requestSlots{max: max, perPrincipal: perPrincipal, by: map[string]int{}}
}

// acquire takes a slot for the principal whose sessionOwner is owner, if
// both caps allow it, and names the setting that refused it otherwise. A
// taken slot must be given back with release.
func (s *requestSlots) acquire(owner string) (ok bool, limitKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.total >= s.max:
		return false, "http.max_requests"
	case s.by[owner] >= s.perPrincipal:
		return false, "http.max_requests_per_principal"
	}
	s.total++
	s.by[owner]++
	return true, ""
}

// release gives back a slot of owner.
func (s *requestSlots) release(owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.by[owner]--; s.by[owner] <= 0 {
		delete(s.by, owner)
	}
}

// len returns the number of slots held.
func (s *requestSlots) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}
