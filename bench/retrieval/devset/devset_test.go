package devset

import (
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
)

// TestSets checks that the generated sets are deterministic, large enough,
// and labelled with sections that exist: every relevant reference names a
// file of the set holding a heading that ends with the reference's.
func TestSets(t *testing.T) {
	tests := []struct {
		name       string
		gen        func(seed uint64) Set
		minQueries int
		classes    []string
	}{
		{"conversation", func(seed uint64) Set { return Conversations(seed, 20) }, 800,
			[]string{"multi-hop", "preference", "single-hop", "temporal"}},
		{"workspace", func(seed uint64) Set { return Workspaces(seed, 20) }, 1000,
			[]string{"abbreviation", "heading", "paraphrase", "synonym", "typo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.gen(12)
			if again := tt.gen(12); !reflect.DeepEqual(s, again) {
				t.Fatal("two generations with one seed differ")
			}
			if got := len(s.Queries); got < tt.minQueries {
				t.Errorf("%d queries, want at least %d", got, tt.minQueries)
			}
			classes := map[string]bool{}
			ids := map[string]bool{}
			for _, q := range s.Queries {
				classes[q.Class] = true
				if ids[q.ID] {
					t.Errorf("query id %s repeats", q.ID)
				}
				ids[q.ID] = true
				if len(q.Relevant) == 0 {
					t.Errorf("%s (%q): no relevant section", q.ID, q.Text)
				}
			}
			if err := s.Check(); err != nil {
				t.Error(err)
			}
			if got := slices.Sorted(maps.Keys(classes)); !slices.Equal(got, tt.classes) {
				t.Errorf("classes %v, want %v", got, tt.classes)
			}
		})
	}
}

// TestNatural checks the stored natural sets: they read with every
// label naming a section, with the number of queries of each class their
// README gives, and ids are unique and of their workspace.
func TestNatural(t *testing.T) {
	for _, tc := range []struct {
		dir, set string
		nFiles   int
		perClass map[string]int
	}{
		{"conversations", "natural", 70, map[string]int{"single-hop": 210, "temporal": 140, "multi-hop": 105, "open-domain": 105}},
		{"conversations-long", "natural-long", 64, map[string]int{"single-hop": 140, "temporal": 80, "multi-hop": 80, "open-domain": 60}},
		{"workspaces", "natural-workspace", 93, map[string]int{"paraphrase": 84, "keyword": 60, "synonym": 48, "abbreviation": 36, "typo": 36}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			s, err := Read(filepath.Join("..", "..", "..", "testdata", "retrieval", "natural", tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Files) != tc.nFiles {
				t.Errorf("%d files, want %d", len(s.Files), tc.nFiles)
			}
			perClass := map[string]int{}
			ids := map[string]bool{}
			for _, q := range s.Queries {
				if len(q.Relevant) == 0 {
					t.Fatalf("query %s: no relevant section", q.ID)
				}
				ws, _, _ := strings.Cut(strings.TrimPrefix(q.Relevant[0].Path, "/memories/workspaces/"), "/")
				if ids[q.ID] || q.Set != tc.set || !strings.HasPrefix(q.ID, ws+"-q") || q.Workspace != "" && q.Workspace != ws {
					t.Errorf("query %+v: want a %s query of its workspace with a unique id", q, tc.set)
				}
				ids[q.ID] = true
				perClass[q.Class]++
			}
			if !maps.Equal(perClass, tc.perClass) {
				t.Errorf("queries per class %v, want %v", perClass, tc.perClass)
			}
		})
	}
}

// TestCheck checks that Check finds a label naming no section.
func TestCheck(t *testing.T) {
	files := map[string]string{"workspaces/w/a.md": "# Title\n\n## 1. Ann\n\nHello.\n"}
	for _, tc := range []struct {
		ref Ref
		ok  bool
	}{
		{Ref{"/memories/workspaces/w/a.md", "1. Ann"}, true},
		{Ref{"/memories/workspaces/w/a.md", "Title"}, true},
		{Ref{"/memories/workspaces/w/a.md", ""}, true},
		{Ref{"/memories/workspaces/w/a.md", "2. Bob"}, false},
		{Ref{"/memories/workspaces/w/a.md", "Ann"}, false},
		{Ref{"/memories/workspaces/w/b.md", ""}, false},
	} {
		s := Set{Files: files, Queries: []Query{{ID: "q", Relevant: []Ref{tc.ref}}}}
		if err := s.Check(); (err == nil) != tc.ok {
			t.Errorf("Check with %+v: %v, want ok %v", tc.ref, err, tc.ok)
		}
	}
}

func TestNonsense(t *testing.T) {
	qs := Nonsense(1, 50, []string{"a", "b"}, nil)
	if len(qs) != 50 {
		t.Fatalf("%d queries, want 50", len(qs))
	}
	for _, q := range qs {
		if q.Class != "nonsense" || len(q.Relevant) != 0 || len(strings.Fields(q.Text)) < 2 {
			t.Errorf("query %+v: want a nonsense query of two or more words with nothing relevant", q)
		}
	}
}

// TestCommonNonsense checks that the memories of several seeds hold no
// word of the stem of a common nonsense word.
func TestCommonNonsense(t *testing.T) {
	stems := map[string]string{}
	for _, w := range commonWords {
		stems[memstore.Stem(w)] = w
	}
	for seed := range uint64(4) {
		s := Conversations(seed, 20)
		s.Merge(Workspaces(seed+1, 20))
		for path, content := range s.Files {
			memstore.Words(content, func(w string) {
				if n, ok := stems[memstore.Stem(w)]; ok {
					t.Errorf("seed %d: %s holds %q, of the stem of nonsense word %q", seed, path, w, n)
				}
			})
		}
	}
	for _, q := range CommonNonsense(1, 20, []string{"a"}, nil) {
		if q.Set != "nonsense-common" || q.Class != "nonsense" || len(q.Relevant) != 0 {
			t.Errorf("query %+v: want a nonsense query of set nonsense-common", q)
		}
	}
}

// TestNonsenseAbsent checks that nonsense leaves out the words whose stem a
// memory file holds: a set written elsewhere may mention them.
func TestNonsenseAbsent(t *testing.T) {
	files := map[string]string{"memory/a.md": "He boiled two kettles and fed the pelicans."}
	for _, q := range CommonNonsense(1, 200, nil, files) {
		for _, w := range strings.Fields(q.Text) {
			if w == "kettle" || w == "pelican" {
				t.Errorf("query %q holds %q, which the memory holds", q.Text, w)
			}
		}
	}
	if got := absent([]string{"kettle", "lemon", "pelican"}, files); !slices.Equal(got, []string{"lemon"}) {
		t.Errorf("absent = %v, want [lemon]", got)
	}
}

func TestWriteRead(t *testing.T) {
	s := Workspaces(3, 2)
	s.Queries = append(s.Queries, Nonsense(3, 5, nil, nil)...)
	dir := t.TempDir()
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Files, s.Files) || len(got.Queries) != len(s.Queries) {
		t.Errorf("read back %d files, %d queries; wrote %d, %d", len(got.Files), len(got.Queries), len(s.Files), len(s.Queries))
	}
	for i := range s.Queries {
		if !reflect.DeepEqual(got.Queries[i], s.Queries[i]) && !(len(s.Queries[i].Relevant) == 0 && len(got.Queries[i].Relevant) == 0) {
			t.Errorf("query %d: read %+v, wrote %+v", i, got.Queries[i], s.Queries[i])
		}
	}
}

// TestConversations_Hard checks that the conversational set looks like a
// long-conversation benchmark and is not solvable by word overlap alone:
// every session file opens with its number and date, and a good share of
// the questions share no word but the speaker's name with any of their
// evidence turns, while other turns share the question's words.
func TestConversations_Hard(t *testing.T) {
	s := Conversations(1, 20)
	dated := regexp.MustCompile(`^# Session \d+, \d{1,2} [A-Z][a-z]+ \d{4}\n`)
	for p, c := range s.Files {
		if !dated.MatchString(c) {
			t.Errorf("%s does not open with its session number and date: %.40q", p, c)
		}
	}
	terms := func(text string) map[string]bool {
		out := map[string]bool{}
		memstore.Terms(text, func(term string) { out[term] = true })
		return out
	}
	section := func(r Ref) string {
		c := s.Files[strings.TrimPrefix(r.Path, "/memories/")]
		_, after, _ := strings.Cut(c, "## "+r.Heading+"\n")
		before, _, _ := strings.Cut(after, "\n## ")
		return before
	}
	disjoint, distracted := 0, 0
	for _, q := range s.Queries {
		qt := terms(q.Text)
		for _, name := range speakerNames {
			delete(qt, memstore.Stem(strings.ToLower(name)))
		}
		shared := false
		for _, r := range q.Relevant {
			for term := range terms(section(r)) {
				shared = shared || qt[term]
			}
		}
		if !shared {
			disjoint++
		}
		if sharesOther(s, q, qt, terms) {
			distracted++
		}
	}
	n := len(s.Queries)
	t.Logf("%d questions: %d share no word with their evidence, %d share words with another turn", n, disjoint, distracted)
	if disjoint*5 < n {
		t.Errorf("%d of %d questions share no word with their evidence, want at least a fifth", disjoint, n)
	}
	if distracted*2 < n {
		t.Errorf("%d of %d questions share words with a turn that is not evidence, want at least half", distracted, n)
	}
}

// sharesOther reports whether a turn of q's conversation that is not its
// evidence holds one of the terms qt.
func sharesOther(s Set, q Query, qt map[string]bool, terms func(string) map[string]bool) bool {
	for p, c := range s.Files {
		if !strings.Contains(p, "/"+q.Workspace+"/") {
			continue
		}
		for _, sec := range strings.Split(c, "\n## ")[1:] {
			heading, text, _ := strings.Cut(sec, "\n")
			if slices.ContainsFunc(q.Relevant, func(r Ref) bool { return r.Heading == heading && strings.HasSuffix(r.Path, "/"+p) }) {
				continue
			}
			for term := range terms(text) {
				if qt[term] {
					return true
				}
			}
		}
	}
	return false
}
