package pgindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
)

// benchDim is the builtin embedder's dimension, the default in production.
const benchDim = 384

// BenchmarkSearch measures hybrid search latency over 100,000 chunks
// (bulk-loaded once; loading and index builds are not timed), reporting
// p50 and p99 besides the mean.
func BenchmarkSearch(b *testing.B) {
	const n = 100_000
	ix, _ := newIndex(b, benchDim)
	start := time.Now()
	bulkLoad(b, ix, n, benchDim)
	b.Logf("loaded and indexed %d chunks in %v", n, time.Since(start).Round(time.Second))

	r := rand.New(rand.NewPCG(1, 2))
	queries := make([]memstore.Query, 64)
	for i := range queries {
		queries[i] = memstore.Query{
			Filter: access.Filter{All: true},
			Text:   fmt.Sprintf("%s %s lex%d", words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(4000)),
			Vector: randVec(uint64(1_000_000+i), benchDim),
			Limit:  10,
		}
		if i%4 == 0 {
			queries[i].Workspace = fmt.Sprintf("ws%d", i%8)
		}
	}
	ctx := context.Background()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		hits, err := ix.Search(ctx, queries[i%len(queries)])
		lat = append(lat, time.Since(t0))
		if err != nil || len(hits) == 0 {
			b.Fatalf("Search = %d hits, %v", len(hits), err)
		}
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// benchFile returns file number f of the Replace benchmarks: perFile
// chunks with 384-dim vectors.
func benchFile(f, perFile int) (string, []memstore.Chunk) {
	p := fmt.Sprintf("/memories/workspaces/ws%d/f%d.md", f%8, f)
	cs := make([]memstore.Chunk, perFile)
	for j := range cs {
		cs[j] = memstore.Chunk{
			Path: p, Seq: j, Workspace: fmt.Sprintf("ws%d", f%8), Scope: memstore.ScopeWorkspace,
			Type: "note", Heading: fmt.Sprintf("Section %d", j),
			Text:      fmt.Sprintf("%s %s %s lex%d uniq%d", words[(f+j)%len(words)], words[j%len(words)], words[f%len(words)], f*j%4000, f),
			Embedding: randVec(uint64(f*perFile+j), benchDim),
		}
	}
	return p, cs
}

// BenchmarkReplaceMany measures ingest throughput through ReplaceMany:
// batches of 25 files of 8 chunks, with the GIN and HNSW indexes in place
// (with -bulk, dropped before and rebuilt after the timed loop, the
// rebuild timed too, as a full rebuild of the index does).
func BenchmarkReplaceMany(b *testing.B) {
	const perFile, filesPerOp = 8, 25
	for _, bulk := range []bool{false, true} {
		b.Run(fmt.Sprintf("bulk=%v", bulk), func(b *testing.B) {
			ix, _ := newIndex(b, benchDim)
			ctx := context.Background()
			if bulk {
				if err := ix.DropSearchIndexes(ctx); err != nil {
					b.Fatal(err)
				}
			}
			files := 0
			for b.Loop() {
				batch := map[string][]memstore.Chunk{}
				for range filesPerOp {
					p, cs := benchFile(files, perFile)
					batch[p] = cs
					files++
				}
				if err := ix.ReplaceMany(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := b.Elapsed()
			if bulk {
				start := time.Now()
				if err := ix.BuildSearchIndexes(ctx); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
			}
			b.ReportMetric(float64(files*perFile)/elapsed.Seconds(), "chunks/s")
		})
	}
}

// BenchmarkReplace measures ingest throughput through Replace: files of 8
// chunks with 384-dim vectors into an index with its GIN and HNSW indexes
// in place, as the mirror writes them.
func BenchmarkReplace(b *testing.B) {
	const perFile = 8
	ix, _ := newIndex(b, benchDim)
	ctx := context.Background()
	files := 0
	for b.Loop() {
		p, cs := benchFile(files, perFile)
		if err := ix.Replace(ctx, p, cs); err != nil {
			b.Fatal(err)
		}
		files++
	}
	b.ReportMetric(float64(files*perFile)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkStore_Reindex measures a full rebuild of a store's Postgres
// mirror from git, end to end: reading the blobs, chunking, the built-in
// embedder, ReplaceMany with the search indexes dropped, and their build.
// The repository holds 4,000 notes of five sections each.
func BenchmarkStore_Reindex(b *testing.B) {
	const files = 4000
	ctx := context.Background()
	emb := embedder.NewBuiltin()
	ix, pool := newIndex(b, emb.Dim())
	s, err := memstore.Open(ctx, b.TempDir(), &memstore.Options{Index: ix, Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close(ctx) })
	notes := make(map[string]string, files)
	for i := range files {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Note %d\n", i)
		for sec := range 5 {
			fmt.Fprintf(&sb, "\n## Section %d\n\n", sec)
			for w := range 50 {
				sb.WriteString(words[(i*7+sec*13+w*w)%len(words)] + " ")
			}
			sb.WriteString("\n")
		}
		notes[fmt.Sprintf("/memories/workspaces/ws%02d/notes/n%05d.md", i%20, i)] = sb.String()
	}
	if _, err := s.Put(ctx, notes, nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := s.Reindex(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	var chunks int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM selmem_chunks`).Scan(&chunks); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(chunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}
