package sqliteindex_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/indextest"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// Benchmark corpus: benchChunks chunks of ~benchWords words in files of
// benchChunksPerFile chunks, across benchWorkspaces workspaces.
const (
	benchChunks        = 100_000
	benchWords         = 60
	benchChunksPerFile = 5
	benchWorkspaces    = 10
)

// benchIndex is built once per test binary; benchDir is removed by TestMain.
var (
	benchOnce  sync.Once
	benchDir   string
	benchPath  string
	benchVocab *vocab
	benchErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// vocab draws words with a Zipf distribution whose most frequent words are
// English stop words, like real text.
type vocab struct {
	words []string
	zipf  *rand.Zipf
}

func newVocab(r *rand.Rand) *vocab {
	words := strings.Fields(`the of and to a in is that for it as with be on by this are or
		from at an not have which but all can has was will their more when if one been should
		use each only per must after before never any other into than then also these may`)
	syll := strings.Fields("ba re ti on ca lo mi ne su ta ver pol in dex ret en sto rage cus tom qua ter ly for mat ion al")
	words = indextest.MadeUpWords(r, words, syll, 30_000)
	return &vocab{words: words, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(words)-1))}
}

func (v *vocab) text(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = v.words[v.zipf.Uint64()]
	}
	return strings.Join(ws, " ")
}

// benchChunk builds chunk seq of file f.
func benchChunk(v *vocab, e *embedder.Builtin, f, seq int) memstore.Chunk {
	wsName := fmt.Sprintf("ws%d", f%benchWorkspaces)
	path := fmt.Sprintf("/memories/workspaces/%s/notes/n%05d.md", wsName, f)
	c := memstore.Chunk{
		Path: path, Seq: seq, Workspace: wsName, Scope: memstore.ScopeWorkspace,
		Type:    []string{"note", "task", "schema", "output"}[f%4],
		Heading: v.text(3), Context: wsName + " › " + filepath.Base(path),
		Text: v.text(benchWords - 3), StartLine: 1 + 10*seq, EndLine: 10 + 10*seq,
	}
	vecs, _ := e.Embed(context.Background(), []string{c.Context + "\n" + c.Heading + "\n" + c.Text})
	c.Embedding = vecs[0]
	return c
}

// benchIndexEnv names a file to keep the benchmark index in between runs;
// it is rebuilt when it does not open as an up-to-date, complete index.
const benchIndexEnv = "SQLITEINDEX_BENCH_INDEX"

// benchDone is the commit recorded once the benchmark index is complete.
const benchDone = "bench-complete"

// buildBenchIndex returns the path of the shared 100k-chunk index, building
// it on first use.
func buildBenchIndex(b *testing.B) (string, *vocab) {
	b.Helper()
	benchOnce.Do(func() {
		r := rand.New(rand.NewPCG(1, 2))
		benchVocab = newVocab(r)
		if benchPath = os.Getenv(benchIndexEnv); benchPath != "" {
			if idx, err := sqliteindex.Open(benchPath, nil); err == nil {
				st, err := idx.State(context.Background())
				idx.Close()
				if err == nil && st.Commit == benchDone {
					return
				}
			}
			for _, p := range []string{benchPath, benchPath + "-wal", benchPath + "-shm"} {
				os.Remove(p)
			}
		} else {
			benchDir, benchErr = os.MkdirTemp("", "sqliteindex-bench-")
			if benchErr != nil {
				return
			}
			benchPath = filepath.Join(benchDir, "index.db")
		}
		e := embedder.NewBuiltin()
		idx, err := sqliteindex.Open(benchPath, nil)
		if benchErr = err; err != nil {
			return
		}
		defer idx.Close()
		ctx := context.Background()
		if benchErr = idx.Reset(ctx, memstore.IndexState{Embedder: e.ID(), Dim: e.Dim()}); benchErr != nil {
			return
		}
		start := time.Now()
		for f := range benchChunks / benchChunksPerFile {
			chunks := make([]memstore.Chunk, benchChunksPerFile)
			for seq := range chunks {
				chunks[seq] = benchChunk(benchVocab, e, f, seq)
			}
			if benchErr = idx.Replace(ctx, chunks[0].Path, chunks); benchErr != nil {
				return
			}
		}
		b.Logf("built %d-chunk index in %v", benchChunks, time.Since(start))
		benchErr = idx.SetState(ctx, memstore.IndexState{Commit: benchDone, Embedder: e.ID(), Dim: e.Dim()})
	})
	if benchErr != nil {
		b.Fatalf("build benchmark index: %v", benchErr)
	}
	return benchPath, benchVocab
}

// benchQueries returns n queries of 2-3 words of moderate frequency, some
// with a stop word or a typo, half filtered to a workspace.
func benchQueries(v *vocab, n int) []memstore.Query {
	r := rand.New(rand.NewPCG(3, 4))
	e := embedder.NewBuiltin()
	qs := make([]memstore.Query, n)
	for i := range qs {
		var words []string
		for range 2 + r.IntN(2) {
			words = append(words, v.words[v.zipf.Uint64()%5000+60])
		}
		if r.IntN(3) == 0 {
			words = slices.Insert(words, 1, "the")
		}
		if w := words[0]; r.IntN(4) == 0 && len(w) > 4 { // typo: swap two letters
			words[0] = w[:2] + string(w[3]) + string(w[2]) + w[4:]
		}
		text := strings.Join(words, " ")
		vecs, _ := e.Embed(context.Background(), []string{text})
		qs[i] = memstore.Query{Filter: access.Filter{All: true}, Text: text, Vector: vecs[0], Limit: 10}
		if i%2 == 1 {
			qs[i].Workspace = fmt.Sprintf("ws%d", r.IntN(benchWorkspaces))
		}
	}
	return qs
}

// reportLatencies reports the p50 and p99 of d in milliseconds, the
// metrics named with prefix.
func reportLatencies(b *testing.B, d []time.Duration, prefix ...string) {
	b.Helper()
	slices.Sort(d)
	at := func(p float64) float64 {
		return float64(d[min(len(d)-1, int(p*float64(len(d))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), strings.Join(prefix, "")+"p50-ms")
	b.ReportMetric(at(0.99), strings.Join(prefix, "")+"p99-ms")
}

// BenchmarkSearch measures search latency at 100,000 chunks with the
// built-in embedder, after the vectors are loaded.
func BenchmarkSearch(b *testing.B) {
	path, v := buildBenchIndex(b)
	idx, err := sqliteindex.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	qs := benchQueries(v, 1000)
	commonVecs := map[string][]float32{}
	for _, w := range v.words[60:100] {
		vecs, _ := embedder.NewBuiltin().Embed(context.Background(), []string{w})
		commonVecs[w] = vecs[0]
	}
	ctx := context.Background()
	start := time.Now()
	if _, err := idx.Search(ctx, qs[0]); err != nil {
		b.Fatal(err)
	}
	b.Logf("first search (loads vectors): %v", time.Since(start))
	modes := []struct {
		name string
		edit func(q memstore.Query) memstore.Query
	}{
		{"hybrid", func(q memstore.Query) memstore.Query { return q }},
		{"text", func(q memstore.Query) memstore.Query { q.Vector = nil; return q }},
		{"vector", func(q memstore.Query) memstore.Query { q.Text = ""; return q }},
		// One frequent word (in 5-10% of the chunks) has no AND level to
		// stop at: bm25() runs on every chunk containing it that passes the
		// filters, all of them without a workspace filter.
		{"text-common-word", func(q memstore.Query) memstore.Query {
			q.Vector, q.Text, q.Workspace = nil, v.words[60+len(q.Text)%40], ""
			return q
		}},
		{"text-common-word-workspace", func(q memstore.Query) memstore.Query {
			q.Vector, q.Text, q.Workspace = nil, v.words[60+len(q.Text)%40], fmt.Sprintf("ws%d", len(q.Text)%benchWorkspaces)
			return q
		}},
		{"hybrid-common-word", func(q memstore.Query) memstore.Query {
			q.Text, q.Workspace = v.words[60+len(q.Text)%40], ""
			q.Vector = commonVecs[q.Text]
			return q
		}},
	}
	// Each mode runs through Search and, as the baseline measured in the
	// same process, through the rankers Search used before it was made
	// fast (baseline_test.go), which return the same hits.
	paths := []struct {
		name   string
		search func(ctx context.Context, q memstore.Query) ([]memstore.Hit, error)
	}{{"fast", idx.Search}, {"baseline", idx.SearchBaseline}}
	for _, m := range modes {
		for _, p := range paths {
			b.Run(m.name+"/"+p.name, func(b *testing.B) {
				lat := make([]time.Duration, 0, b.N)
				cpu := make([]time.Duration, 0, b.N)
				i := 0
				for b.Loop() {
					q := m.edit(qs[i%len(qs)])
					i++
					c0, t0 := cpuTime(b), time.Now()
					hits, err := p.search(ctx, q)
					lat, cpu = append(lat, time.Since(t0)), append(cpu, cpuTime(b)-c0)
					if err != nil || len(hits) == 0 {
						b.Fatalf("Search(%q) = %d hits, %v", q.Text, len(hits), err)
					}
				}
				reportLatencies(b, lat)
				reportLatencies(b, cpu, "cpu-")
			})
		}
	}
}

// BenchmarkFirstSearch measures opening the 100,000-chunk index and running
// its first search, which loads the chunks' filter fields and vectors, and
// reports the Go heap the loaded index holds.
func BenchmarkFirstSearch(b *testing.B) {
	path, v := buildBenchIndex(b)
	q := benchQueries(v, 1)[0]
	var held uint64
	for b.Loop() {
		before := heapAlloc()
		idx, err := sqliteindex.Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := idx.Search(context.Background(), q); err != nil {
			b.Fatal(err)
		}
		held = heapAlloc() - before
		runtime.KeepAlive(idx)
		idx.Close()
	}
	b.ReportMetric(float64(held)/1e6, "heap-MB")
}

// heapAlloc returns the bytes of live heap objects, after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkOpen measures opening the up-to-date 100,000-chunk index.
func BenchmarkOpen(b *testing.B) {
	path, _ := buildBenchIndex(b)
	for b.Loop() {
		idx, err := sqliteindex.Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := idx.State(context.Background()); err != nil {
			b.Fatal(err)
		}
		idx.Close()
	}
}

// BenchmarkReplace measures replacing a 5-chunk file in the 100,000-chunk
// index with its vectors loaded.
func BenchmarkReplace(b *testing.B) {
	path, v := buildBenchIndex(b)
	idx, err := sqliteindex.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	ctx := context.Background()
	e := embedder.NewBuiltin()
	if _, err := idx.Search(ctx, benchQueries(v, 1)[0]); err != nil {
		b.Fatal(err)
	}
	files := make([][]memstore.Chunk, 100)
	for f := range files {
		for seq := range benchChunksPerFile {
			c := benchChunk(v, e, f, seq)
			c.Path = fmt.Sprintf("/memories/workspaces/bench/replace-%d.md", f)
			files[f] = append(files[f], c)
		}
	}
	i := 0
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		chunks := files[i%len(files)]
		i++
		t0 := time.Now()
		if err := idx.Replace(ctx, chunks[0].Path, chunks); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.ReportMetric(float64(benchChunksPerFile*b.N)/b.Elapsed().Seconds(), "chunks/s")
	reportLatencies(b, lat)
	for _, chunks := range files {
		if err := idx.DeletePath(ctx, chunks[0].Path); err != nil {
			b.Fatal(err)
		}
	}
}
