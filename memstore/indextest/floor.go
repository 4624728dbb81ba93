package indextest

import (
	"fmt"
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// Paths of the relevance floor's scope test: the searched workspace, a
// readable one holding a word the searched one lacks, and an unreadable
// one holding another.
const (
	pFloorHR     = "/memories/workspaces/hr/notes/onboarding.md"
	pFloorSecret = "/memories/workspaces/secret/notes/zorblax.md"
)

// testFloorScope checks the relevance floor (Query.MinSimilarity): a
// chunk full text does not find is a hit only at or above it, whatever
// the query's words and wherever the memory holds them. Made-up words
// find nothing; a word, or a typo of a word, held in another readable
// workspace finds nothing in the searched one, whose chunks are below the
// floor, and finds its chunk by full text when every workspace is
// searched; a word held only where the principal may not read finds
// nothing, as it would if those chunks did not exist.
func testFloorScope(t *testing.T, s *suite) {
	if memstore.DefaultRanking().UnknownVectorWeight == 0 {
		t.Skip("the default ranking has no vector ranking for queries with unknown words")
	}
	s.putTexts(t, append([]string{retention}, distractors...)...)
	s.put(t, s.area(t, pFloorHR, "Onboarding checklist: laptops and badges are ready on the first day."))
	s.put(t, s.area(t, pFloorSecret, "Project zorblax: the acquisition closes in March."))
	salesHR := access.Filter{Workspaces: []string{"hr", ws}, User: "vic"}
	salesOnly := access.Filter{Workspaces: []string{ws}, User: "vic"}
	tests := []struct {
		name      string
		text      string
		filter    access.Filter
		workspace string
		want      string // "none" or the path of the first hit
	}{
		{"made-up words", "xylophone quasar", salesHR, "", "none"},
		{"made-up words in a workspace", "xylophone quasar", salesHR, ws, "none"},
		{"word held in another readable workspace", "onboarding xylophone", salesHR, ws, "none"},
		{"typo of a word held in another readable workspace", "onbaording xylophone", salesHR, ws, "none"},
		{"word held in another readable workspace, all searched", "onboarding xylophone", salesHR, "", pFloorHR},
		{"word held only in an unreadable workspace", "onboarding xylophone", salesOnly, ws, "none"},
		{"word held only in an unreadable workspace, all searched", "zorblax xylophone", salesHR, "", "none"},
		{"typo of a word held only in an unreadable workspace", "zorblex xylophone", salesHR, ws, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := s.hybrid(t, tt.text)
			q.Filter, q.Workspace, q.Limit = tt.filter, tt.workspace, 100
			s.belowFloor(t, q, retention)
			hits := s.search(t, q)
			switch tt.want {
			case "none":
				if len(hits) != 0 {
					t.Errorf("hits %v, want none", keys(hits))
				}
			default:
				if len(hits) == 0 || hits[0].Path != tt.want || hits[0].TextRank != 1 {
					t.Fatalf("hits %v, want %s first by full text", keys(hits), tt.want)
				}
			}
		})
	}
}

// belowFloor fails the test unless the vector of q is below its floor for
// the chunk holding text, so that a hit there is one the floor would
// have removed.
func (s *suite) belowFloor(t *testing.T, q memstore.Query, text string) {
	t.Helper()
	c := s.chunk(t, "/memories/workspaces/"+ws+"/notes/00.md", 0, text)
	if sim := dot(q.Vector, c.Embedding); sim >= q.MinSimilarity {
		t.Fatalf("similarity of %q to %q is %.3f, not below the floor %.3f: the test proves nothing", q.Text, text, sim, q.MinSimilarity)
	}
}

// dot is the cosine similarity of two L2-normalised vectors.
func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("dot: lengths %d and %d", len(a), len(b)))
	}
	var x float64
	for i := range a {
		x += float64(a[i]) * float64(b[i])
	}
	return x
}
