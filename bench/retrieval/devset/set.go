// Package devset generates the labelled retrieval sets bench/retrieval
// evaluates selmem's search on, deterministically from a seed, and reads
// and writes sets in the harness's on-disk format.
//
// The sets are synthetic: every file and query is produced by this package
// from word lists and templates written for it, so they carry the
// repository's licence and no third-party text. They are built to be hard
// for a lexical ranker in the ways real memory is: queries paraphrase the
// text, use synonyms, abbreviations and typos, name only words of a
// heading, or ask about a conversation turn whose answer shares few words
// with the question while a neighbouring turn shares many.
package devset

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Ref names one relevant section: a memory file by its virtual path and,
// within it, the section whose heading path ends with Heading ("" for a
// file indexed whole).
type Ref struct {
	Path    string `json:"path"`
	Heading string `json:"heading,omitempty"`
}

// Query is one labelled query. Relevant is empty for queries that should
// match nothing (class "nonsense").
type Query struct {
	ID        string `json:"id"`
	Set       string `json:"set"`
	Class     string `json:"class"`
	Text      string `json:"query"`
	Workspace string `json:"workspace,omitempty"`
	Relevant  []Ref  `json:"relevant"`
}

// Set is a labelled retrieval set: memory files by repository-relative
// path, and queries over them.
type Set struct {
	Files   map[string]string
	Queries []Query
}

// Merge adds the files and queries of o to s.
func (s *Set) Merge(o Set) {
	if s.Files == nil {
		s.Files = map[string]string{}
	}
	for p, c := range o.Files {
		s.Files[p] = c
	}
	s.Queries = append(s.Queries, o.Queries...)
}

// Write stores s under dir: the files below dir/memory, the queries in
// dir/queries.jsonl, one JSON object a line.
func (s Set) Write(dir string) error {
	for _, p := range slices.Sorted(maps.Keys(s.Files)) {
		full := filepath.Join(dir, "memory", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(s.Files[p]), 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, q := range s.Queries {
		if err := enc.Encode(q); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Read loads a set written by Write (or prepared by hand in its format).
func Read(dir string) (Set, error) {
	s := Set{Files: map[string]string{}}
	root := filepath.Join(dir, "memory")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		s.Files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("read set %s: %w", dir, err)
	}
	f, err := os.Open(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return s, fmt.Errorf("read set %s: %w", dir, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q Query
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return s, fmt.Errorf("read set %s: queries line %d: %w", dir, len(s.Queries)+1, err)
		}
		s.Queries = append(s.Queries, q)
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("read set %s: %w", dir, err)
	}
	if err := s.Check(); err != nil {
		return s, fmt.Errorf("read set %s: %w", dir, err)
	}
	return s, nil
}

// Check reports the first label of s that names no section: a relevant
// file the set does not hold, or a heading no line of it has (after its
// leading '#'s).
func (s Set) Check() error {
	for _, q := range s.Queries {
		for _, r := range q.Relevant {
			content, ok := s.Files[strings.TrimPrefix(r.Path, "/memories/")]
			if !ok {
				return fmt.Errorf("query %s: relevant file %s is not in the set", q.ID, r.Path)
			}
			if r.Heading != "" && !hasHeading(content, r.Heading) {
				return fmt.Errorf("query %s: %s has no heading %q", q.ID, r.Path, r.Heading)
			}
		}
	}
	return nil
}

// hasHeading reports whether a markdown heading of content reads heading.
func hasHeading(content, heading string) bool {
	for line := range strings.Lines(content) {
		if h, ok := strings.CutPrefix(line, "#"); ok && strings.TrimSpace(strings.TrimLeft(h, "#")) == heading {
			return true
		}
	}
	return false
}

// gen wraps a seeded generator with the helpers the templates use.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, 0x5e1e3e3))} }

// pick returns a random element of xs.
func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

// chance reports true with probability p.
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// typo returns w with one edit (swap, drop, double or replace a letter)
// away from its first letter, or w when it is too short.
func (g *gen) typo(w string) string {
	if len(w) < 5 {
		return w
	}
	i := 1 + g.r.IntN(len(w)-2)
	switch g.r.IntN(4) {
	case 0:
		return w[:i] + string(w[i+1]) + string(w[i]) + w[i+2:]
	case 1:
		return w[:i] + w[i+1:]
	case 2:
		return w[:i] + string(w[i]) + w[i:]
	default:
		c := byte('a' + g.r.IntN(26))
		if c == w[i] {
			c = 'e'
		}
		return w[:i] + string(c) + w[i+1:]
	}
}

// typoQuery puts a typo into the longest word of q.
func (g *gen) typoQuery(q string) string {
	ws := strings.Fields(q)
	best := 0
	for i, w := range ws {
		if len(strings.Trim(w, "?,.")) > len(strings.Trim(ws[best], "?,.")) {
			best = i
		}
	}
	w := strings.Trim(ws[best], "?,.")
	ws[best] = strings.Replace(ws[best], w, g.typo(w), 1)
	return strings.Join(ws, " ")
}

// fill replaces {key} in t with vars[key].
func fill(t string, vars map[string]string) string {
	for k, v := range vars {
		t = strings.ReplaceAll(t, "{"+k+"}", v)
	}
	return t
}
