package sqliteindex

import "testing"

func TestVecStore_Find(t *testing.T) {
	s := newVecStore(0, 0)
	ids := []int64{2, 5, 9, 10, 20, 21, 22, 40}
	for _, id := range ids {
		s.appendRow(vecRow{id: id})
	}
	for id := int64(0); id <= 42; id++ {
		want := -1
		for r, x := range ids {
			if x == id {
				want = r
			}
		}
		for from := -1; from <= len(ids)+1; from++ {
			if got := s.find(id, from); got != want {
				t.Errorf("find(%d, from %d) = %d, want %d", id, from, got, want)
			}
		}
	}
}
