package sqliteindex

import (
	"strconv"
	"testing"
)

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

// TestVecStore_Remove checks both ways of removing paths: by lookup
// (removePaths) and by a predicate over every path (remove), including the
// compaction that follows once a quarter of the rows are dead.
func TestVecStore_Remove(t *testing.T) {
	const files, perFile = 600, 4
	build := func() *vecStore {
		s := newVecStore(1, 0)
		id := int64(1)
		for f := range files {
			for seq := range perFile {
				s.cols[0] = append(s.cols[0], float32(id))
				s.appendRow(vecRow{id: id, path: pathOf(f), seq: seq})
				s.lex.add(fieldsOf("", "", "shared file"+strconv.Itoa(f)))
				id++
			}
		}
		return s
	}
	tests := []struct {
		name   string
		remove func(s *vecStore)
		gone   func(f int) bool
	}{
		{"removePaths, few", func(s *vecStore) { s.removePaths([]string{pathOf(3), pathOf(7), "/memories/none.md"}) },
			func(f int) bool { return f == 3 || f == 7 }},
		{"removePaths, enough to compact", func(s *vecStore) {
			var ps []string
			for f := 0; f < files; f += 2 {
				ps = append(ps, pathOf(f))
			}
			s.removePaths(ps)
		}, func(f int) bool { return f%2 == 0 }},
		{"remove by predicate", func(s *vecStore) { s.remove(func(p string) bool { return p == pathOf(5) }) },
			func(f int) bool { return f == 5 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := build()
			tt.remove(s)
			live := 0
			for r, row := range s.rows {
				if row.dead {
					continue
				}
				live++
				if float32(row.id) != s.cols[0][r] {
					t.Fatalf("row %d (id %d) has vector %v after removal", r, row.id, s.cols[0][r])
				}
			}
			want := 0
			for f := range files {
				_, ok := s.byPath[pathOf(f)]
				if ok == tt.gone(f) {
					t.Errorf("%s: in byPath %v, want %v", pathOf(f), ok, !tt.gone(f))
				}
				if !tt.gone(f) {
					want += perFile
				}
			}
			if live != want || len(s.rows)-s.dead != want {
				t.Errorf("live rows %d (rows %d, dead %d), want %d", live, len(s.rows), s.dead, want)
			}
			// The full-text statistics count live rows only, and every
			// posting names a live row of its file.
			if got := s.lex.live; got != want {
				t.Errorf("lexicon live rows %d, want %d", got, want)
			}
			if got := s.lex.df[s.lex.ids["share"]]; int(got) != want {
				t.Errorf("df of a word in every chunk = %d, want %d", got, want)
			}
			for f := range files {
				id, ok := s.lex.ids["file"+strconv.Itoa(f)]
				if !ok {
					t.Fatalf("file%d not in the lexicon", f)
				}
				if got, wantDF := s.lex.df[id], map[bool]int32{true: 0, false: perFile}[tt.gone(f)]; got != wantDF {
					t.Errorf("df of file%d = %d, want %d", f, got, wantDF)
				}
				for _, p := range s.lex.post[id] {
					if r := s.rows[p.row]; !r.dead && r.path != pathOf(f) {
						t.Errorf("posting of file%d names row %d of %s", f, p.row, r.path)
					}
				}
			}
		})
	}
}

func pathOf(f int) string { return "/memories/f" + strconv.Itoa(f) + ".md" }
