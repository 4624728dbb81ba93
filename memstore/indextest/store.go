package indextest

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/thesaurus"
)

// RunStore checks a store over a backend: it picks up commits made
// outside selmem when it reconciles, rebuilds the index when the embedder
// (and its dimension) changes, and searches WordNet's synonyms of the
// query words the memory does not hold. newIndex returns a fresh,
// empty index; the suite closes it.
func RunStore(t *testing.T, newIndex func(t *testing.T) memstore.Index) {
	t.Run("ExternalCommits", func(t *testing.T) { testExternalCommits(t, newIndex(t)) })
	t.Run("EmbedderChange", func(t *testing.T) { testEmbedderChange(t, newIndex(t)) })
	t.Run("Thesaurus", func(t *testing.T) { testThesaurus(t, newIndex(t)) })
}

func openStore(t *testing.T, home string, idx memstore.Index, emb memstore.Embedder) *memstore.Store {
	t.Helper()
	return openStoreWith(t, home, &memstore.Options{Index: idx, Embedder: emb})
}

func openStoreWith(t *testing.T, home string, opts *memstore.Options) *memstore.Store {
	t.Helper()
	s, err := memstore.Open(context.Background(), home, opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func firstHit(t *testing.T, s *memstore.Store, q string) string {
	t.Helper()
	res, err := s.Search(context.Background(), memstore.SearchRequest{Query: q, Limit: 3})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	if len(res.Hits) == 0 {
		return ""
	}
	return res.Hits[0].Path
}

// git runs the git CLI in dir as an outside user would.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	args = append([]string{"-C", dir, "-c", "user.name=outside", "-c", "user.email=outside@localhost"}, args...)
	if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func testExternalCommits(t *testing.T, idx memstore.Index) {
	t.Cleanup(func() { idx.Close() })
	ctx := context.Background()
	home := t.TempDir()
	s := openStore(t, home, idx, embedder.NewBuiltin())
	if _, err := s.Create(ctx, "/memories/workspaces/w/task.md", "# Task\n\n- Invoices are due in 30 days.\n", nil); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "memory")
	ext := filepath.Join(dir, "workspaces", "w", "notes", "vendors.md")
	if err := os.MkdirAll(filepath.Dir(ext), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ext, []byte("# Vendors\n\n- Prefer suppliers certified for cold chain logistics.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "outside edit")
	git(t, dir, "rm", "-q", "workspaces/w/task.md")
	git(t, dir, "commit", "-q", "-m", "outside delete")
	if err := s.Reconcile(ctx); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if got, want := firstHit(t, s, "cold chain suppliers"), "/memories/workspaces/w/notes/vendors.md"; got != want {
		t.Errorf("after an external commit: first hit %q, want %q", got, want)
	}
	if got := firstHit(t, s, "invoices due 30 days"); got == "/memories/workspaces/w/task.md" {
		t.Errorf("a file deleted outside selmem is still found")
	}
	head, err := s.Head()
	if err != nil {
		t.Fatal(err)
	}
	if st, err := idx.State(ctx); err != nil || st.Commit != head {
		t.Errorf("index state %+v (%v), want commit %s", st, err, head)
	}
}

// smallEmbedder is the built-in embedder folded into 64 dimensions, under
// another ID: a change of model and of dimension.
type smallEmbedder struct{ *embedder.Builtin }

const smallDim = 64

func (smallEmbedder) ID() string { return "indextest-folded-64" }
func (smallEmbedder) Dim() int   { return smallDim }

func (e smallEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := e.Builtin.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(vecs))
	for i, v := range vecs {
		f := make([]float32, smallDim)
		for d, x := range v {
			f[d%smallDim] += x
		}
		var n float64
		for _, x := range f {
			n += float64(x) * float64(x)
		}
		if n > 0 {
			inv := float32(1 / math.Sqrt(n))
			for d := range f {
				f[d] *= inv
			}
		}
		out[i] = f
	}
	return out, nil
}

func testEmbedderChange(t *testing.T, idx memstore.Index) {
	t.Cleanup(func() { idx.Close() })
	ctx := context.Background()
	home := t.TempDir()
	s := openStore(t, home, idx, embedder.NewBuiltin())
	if _, err := s.Create(ctx, "/memories/workspaces/w/task.md", "# Task\n\n- Forecasts use a 13-week rolling window.\n", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	emb := smallEmbedder{embedder.NewBuiltin()}
	s = openStore(t, home, idx, emb)
	st, err := idx.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedder != emb.ID() || st.Dim != smallDim {
		t.Fatalf("after an embedder change the index records %q/%d, want %q/%d", st.Embedder, st.Dim, emb.ID(), smallDim)
	}
	if got, want := firstHit(t, s, "rolling window forecasts"), "/memories/workspaces/w/task.md"; got != want {
		t.Errorf("after the rebuild: first hit %q, want %q", got, want)
	}
}

// testThesaurus: a query in words the memory does not use finds the memory
// that uses their synonyms, or beside a word the memory uses, the words
// used in like contexts; a query of unrelated words, or of words whose
// associated words alone the memory uses, still finds nothing.
func testThesaurus(t *testing.T, idx memstore.Index) {
	t.Cleanup(func() { idx.Close() })
	ctx := context.Background()
	s := openStoreWith(t, t.TempDir(), &memstore.Options{Index: idx, Embedder: embedder.NewBuiltin(),
		Thesaurus: thesaurus.WordNet{}, Associations: thesaurus.GloVe{}})
	files := map[string]string{
		"/memories/workspaces/w/churn.md":    "# Churn definition\n\n- A customer is lost after 90 days without a paid order.\n",
		"/memories/workspaces/w/invoices.md": "# Invoices\n\n- Invoices are due in 30 days.\n",
		"/memories/workspaces/w/travel.md":   "# Travel\n\n- Evan took a trip to Banff in May.\n",
		"/memories/workspaces/w/evan.md":     "# Evan's status\n\n- Evan marks a red status on late invoices.\n",
	}
	for path, text := range files {
		if _, err := s.Create(ctx, path, text, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ query, want string }{
		{"when is a client gone", "/memories/workspaces/w/churn.md"},
		{"clients", "/memories/workspaces/w/churn.md"},
		{"xylophone quasar", ""},
		// "visit" is not in the memory; "trip" is used in like contexts.
		{"when was evan's visit", "/memories/workspaces/w/travel.md"},
		// "red" is used like "purple", but alone does not match.
		{"purple pelican", ""},
	} {
		if got := firstHit(t, s, tc.query); got != tc.want {
			t.Errorf("search %q: first hit %q, want %q", tc.query, got, tc.want)
		}
	}
}
