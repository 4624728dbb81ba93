// Command indexbench measures selmem's index backends on one synthetic
// corpus: ingest throughput, then search latency (p50, p99) of
// full-text-only, vector-only and hybrid queries, and how closely Postgres
// returns what the embedded index returns.
//
//	go run ./bench/indexbench -chunks 100000 -backend sqlite,postgres [-dsn ...]
//
// The corpus is deterministic for a -seed: markdown chunks of 50-70 words
// drawn with a Zipf distribution from a 4,000-word vocabulary whose most
// frequent words are English stop words, files of 5 chunks over 10
// workspaces, embedded with the built-in embedder (484 dimensions, of
// which the semantic 100 stay mostly zero: few made-up words have a GloVe
// vector). Queries are 2-4 content words from the same distribution; one
// in ten has a typo, one in four is restricted to a workspace.
//
// The embedded index (sqliteindex) always runs first: it ranks exactly, by
// the definition of memstore.Ranking (every posting of every query term,
// every vector), so it is the reference. Its vector mode is also checked
// against the exact cosine top 10 computed here. For Postgres, recall@10 is
// the overlap of its top 10 with the embedded index's top 10 for the same
// query and mode, averaged over the queries (a query with no hits in the
// reference counts as 1).
//
// With -readable N it also compares, in the same process and on the same
// queries (without their workspace restriction), the search of a principal
// allowed N of the workspaces (memstore.Query.Filter) with an unfiltered
// one, the two run in alternating order:
//
//	go run ./bench/indexbench -chunks 100000 -workspaces 1000 -readable 10
//
// Without -dsn, Postgres runs in a throwaway cluster (internal/pgtest)
// removed on exit. Logs go to stderr; the report to stdout.
//
// At 1,000,000 chunks each load takes most of an hour. Build the reference
// and the Postgres database once, then measure against both as often as
// needed (the corpus is then not even generated):
//
//	go run ./bench/indexbench -chunks 1000000 -backend sqlite -ref ref-1m.json -no-vector-truth
//	go run ./bench/indexbench -chunks 1000000 -backend postgres -dsn $DSN -no-vector-truth
//	go run ./bench/indexbench -chunks 1000000 -backend postgres -dsn $DSN -reuse -ref ref-1m.json -no-vector-truth
//
// The sqlite backend runs only when -backend names it; without it the
// reference is read from -ref, and without either, Postgres's recall is
// reported as NaN.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
)

// config holds the flags.
type config struct {
	chunks     int
	backends   []string
	dsn        string
	queries    int
	truth      int
	seed       uint64
	batch      int
	incFiles   int
	efSearch   int
	textPool   int
	hnswM      int
	hnswEfC    int
	maintMem   string
	sharedBufs string
	explain    bool
	explainN   int
	variants   []string
	dir        string
	verbose    bool
	slowest    int
	reuse      bool
	readable   int
	aclRounds  int
	noVecTruth bool
	ref        string
}

func main() {
	var cfg config
	var backends string
	flag.IntVar(&cfg.chunks, "chunks", 100_000, "number of chunks in the corpus")
	flag.StringVar(&backends, "backend", "sqlite,postgres", "comma-separated backends: sqlite, postgres")
	flag.StringVar(&cfg.dsn, "dsn", "", "Postgres connection string (database with pgvector); empty starts a throwaway cluster")
	flag.IntVar(&cfg.queries, "queries", 200, "number of queries")
	flag.IntVar(&cfg.truth, "truth", 0, "score recall over the first N queries only (0: all)")
	flag.Uint64Var(&cfg.seed, "seed", 1, "corpus and query seed")
	flag.IntVar(&cfg.batch, "batch", 2000, "chunks per ReplaceMany call when loading the corpus")
	flag.IntVar(&cfg.incFiles, "inc-files", 200, "files re-written one Replace at a time, indexes live, to measure incremental ingest")
	flag.IntVar(&cfg.efSearch, "ef-search", 0, "pgindex Options.EfSearch (0: default)")
	flag.IntVar(&cfg.textPool, "text-pool", 0, "pgindex Options.TextPool (0: default)")
	flag.IntVar(&cfg.hnswM, "hnsw-m", 0, "pgindex Options.HNSWM (0: default)")
	flag.IntVar(&cfg.hnswEfC, "hnsw-ef-construction", 0, "pgindex Options.HNSWEfConstruction (0: default)")
	flag.StringVar(&cfg.maintMem, "maintenance-mem", "2GB", "maintenance_work_mem for the Postgres index build")
	flag.StringVar(&cfg.sharedBufs, "shared-buffers", "2GB", "shared_buffers of the throwaway cluster")
	flag.BoolVar(&cfg.explain, "explain", true, "print EXPLAIN (ANALYZE, BUFFERS) of one hybrid query (Postgres)")
	flag.IntVar(&cfg.explainN, "explain-queries", 1, "with -explain: how many of the first queries to explain")
	flag.StringVar(&cfg.dir, "dir", "", "directory for the SQLite file (default: a temporary directory, removed)")
	flag.BoolVar(&cfg.verbose, "v", false, "log progress to stderr")
	flag.BoolVar(&cfg.reuse, "reuse", false, "with -dsn: search the corpus an earlier run with the same -chunks and -seed loaded, without loading it again")
	flag.IntVar(&cfg.slowest, "slowest", 0, "print the N slowest queries of each mode, with their latencies")
	flag.IntVar(&workspaces, "workspaces", 10, "number of workspaces the files are spread over")
	flag.IntVar(&cfg.readable, "readable", 0, "also measure a principal allowed this many of the workspaces against an unfiltered search (0: do not)")
	flag.IntVar(&cfg.aclRounds, "acl-rounds", 3, "with -readable: passes over the queries, each query run filtered and unfiltered in turn")
	flag.BoolVar(&cfg.noVecTruth, "no-vector-truth", false, "skip the exact cosine ground truth (minutes at 1,000,000 chunks); sqlite's vector recall is then reported as 0")
	flag.StringVar(&cfg.ref, "ref", "", "file of the embedded index's hits: written when sqlite runs, read as the reference when it does not")
	var variants string
	flag.StringVar(&variants, "pg-variants", "", "extra Postgres search settings to measure on the same data, e.g. ef=40,ef=400,pool=4000")
	flag.Parse()
	cfg.backends = strings.Split(backends, ",")
	if variants != "" {
		cfg.variants = strings.Split(variants, ",")
	}
	if workspaces < 1 || cfg.readable > workspaces {
		fmt.Fprintln(os.Stderr, "indexbench: -workspaces must be positive and at least -readable")
		os.Exit(2)
	}
	if cfg.truth <= 0 || cfg.truth > cfg.queries {
		cfg.truth = cfg.queries
	}
	level := slog.LevelWarn
	if cfg.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	progress = log
	if err := run(context.Background(), cfg, os.Stdout, log); err != nil {
		fmt.Fprintln(os.Stderr, "indexbench:", err)
		os.Exit(1)
	}
}

// backend is one index under test.
type backend struct {
	name string
	ix   memstore.Index
	// load ingests the corpus into the empty index and reports how.
	load func(ctx context.Context, cs []memstore.Chunk) (ingest, error)
	// explain returns the plan of a hybrid search, or nil.
	explain func(ctx context.Context, q memstore.Query) (string, error)
	close   func() error
	// variant returns the index with other search settings ("ef=N",
	// "pool=N"), or nil.
	variant func(spec string) (memstore.Index, error)
}

// ingest reports a load.
type ingest struct {
	lines []string // "what: figure" lines
}

func (in *ingest) add(format string, args ...any) {
	in.lines = append(in.lines, fmt.Sprintf(format, args...))
	progress.Info(in.lines[len(in.lines)-1])
}

// progress logs progress to stderr (with -v).
var progress = slog.New(slog.DiscardHandler)

// mode is one kind of query.
type mode struct {
	name string
	q    func(q memstore.Query) memstore.Query
}

var modes = []mode{
	{"full-text", func(q memstore.Query) memstore.Query { q.Vector = nil; return q }},
	{"vector", func(q memstore.Query) memstore.Query { q.Text = ""; return q }},
	{"hybrid", func(q memstore.Query) memstore.Query { return q }},
}

// result is one backend's figures for one mode.
type result struct {
	p50, p99 time.Duration
	recall   float64
}

func run(ctx context.Context, cfg config, out io.Writer, log *slog.Logger) error {
	emb := embedder.NewBuiltin()
	v := newVocab(cfg.seed)
	qs := v.queries(cfg.seed, cfg.queries, emb)
	warm := v.queries(cfg.seed+1, 50, emb)
	var backends []string
	for _, name := range cfg.backends {
		if name = strings.TrimSpace(name); name != "" && !slices.Contains(backends, name) {
			backends = append(backends, name)
		}
	}
	// The embedded index ranks exactly (every posting, every vector): it is
	// the reference Postgres is compared with, so it runs first; without
	// it, the reference is read from -ref.
	if i := slices.Index(backends, "sqlite"); i > 0 {
		backends = slices.Insert(slices.Delete(backends, i, i+1), 0, "sqlite")
	}
	var ref map[string][][]key
	if backends[0] != "sqlite" && cfg.ref != "" {
		var err error
		if ref, err = readRef(cfg.ref, cfg, qs); err != nil {
			return err
		}
		fmt.Fprintf(out, "reference: the embedded index's hits read from %s\n", cfg.ref)
	}

	// The corpus is generated only when something needs it: a load, or
	// the exact vector ground truth.
	var cs []memstore.Chunk
	if backends[0] == "sqlite" || !cfg.reuse || !cfg.noVecTruth {
		start := time.Now()
		cs = corpus(v, cfg.seed, cfg.chunks, emb)
		fmt.Fprintf(out, "corpus: %d chunks (%d files, %d workspaces), %d-word vocabulary, %d queries; generated and embedded in %v\n",
			len(cs), (len(cs)+chunksPerFile-1)/chunksPerFile, workspaces, vocabSize, len(qs), time.Since(start).Round(time.Millisecond))
	}

	const depth = 50 // the vector ranking's depth, the backends' default for Limit 10
	var vecTruth [][]key
	if !cfg.noVecTruth {
		start := time.Now()
		vecTruth = exactVector(cs, qs, depth)
		fmt.Fprintf(out, "exact vector ground truth in %v\n", time.Since(start).Round(time.Millisecond))
	}

	results := map[string]map[string]result{}
	acls := map[string][]aclResult{}
	var names []string
	for _, name := range backends {
		var b *backend
		var err error
		switch name {
		case "sqlite":
			b, err = openSQLite(cfg, log)
		case "postgres":
			b, err = openPostgres(ctx, cfg, log)
		default:
			return fmt.Errorf("unknown backend %q (want sqlite or postgres)", name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		res, hits, err := measure(ctx, cfg, out, log, b, cs, qs, warm, vecTruth, ref)
		if err == nil && cfg.readable > 0 {
			acls[name], err = measureACL(ctx, cfg, b.ix, qs)
		}
		if cerr := b.close(); err == nil && cerr != nil {
			err = cerr
		}
		if err == nil && name == "sqlite" && cfg.ref != "" {
			err = writeRef(cfg.ref, cfg, qs, hits)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if name == "sqlite" {
			ref = hits
		}
		results[name] = res
		names = append(names, name)
	}

	fmt.Fprintf(out, "\n%d chunks, %d queries (recall over the first %d), limit 10, candidates %d; medians of single-client latencies\n",
		cfg.chunks, len(qs), cfg.truth, depth)
	fmt.Fprintf(out, "%-10s %-10s %9s %9s %10s\n", "backend", "mode", "p50 ms", "p99 ms", "recall@10")
	for _, name := range names {
		for _, m := range modes {
			r := results[name][m.name]
			fmt.Fprintf(out, "%-10s %-10s %9.2f %9.2f %10.3f\n", name, m.name, ms(r.p50), ms(r.p99), r.recall)
		}
		for _, spec := range cfg.variants {
			for _, m := range modes {
				if r, ok := results[name][spec+" "+m.name]; ok {
					fmt.Fprintf(out, "%-10s %-10s %9.2f %9.2f %10.3f  (%s)\n", name, m.name, ms(r.p50), ms(r.p99), r.recall, spec)
				}
			}
		}
	}
	fmt.Fprintln(out, "recall@10: sqlite against exact cosine for vector, 1 by definition otherwise (it scores every posting);")
	fmt.Fprintln(out, "postgres: overlap of its top 10 with sqlite's top 10 for the same query and mode")
	if cfg.readable > 0 {
		printACL(out, cfg, names, acls)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// measure loads cs into b and runs qs in every mode, scoring each against
// ref (the embedded index's hits by mode) or, without ref, the vector mode
// against vecTruth. It returns the figures and the hits by mode.
func measure(ctx context.Context, cfg config, out io.Writer, log *slog.Logger, b *backend,
	cs []memstore.Chunk, qs, warm []memstore.Query, vecTruth [][]key, ref map[string][][]key) (map[string]result, map[string][][]key, error) {
	fmt.Fprintf(out, "\n== %s\n", b.name)
	in, err := b.load(ctx, cs)
	if err != nil {
		return nil, nil, fmt.Errorf("load: %w", err)
	}
	for _, l := range in.lines {
		fmt.Fprintln(out, "ingest:", l)
	}
	log.Info("loaded", "backend", b.name)

	// Warm up with other queries: caches, pooled connections, prepared
	// statements.
	for _, m := range modes {
		for _, q := range warm {
			if _, err := b.ix.Search(ctx, m.q(q)); err != nil {
				return nil, nil, fmt.Errorf("warm-up: %w", err)
			}
		}
	}

	res := map[string]result{}
	hits := map[string][][]key{}
	for _, m := range modes {
		r, h, err := runMode(ctx, cfg, b.ix, m, qs, ref, vecTruth, b.name == "sqlite")
		if err != nil {
			return nil, nil, err
		}
		res[m.name], hits[m.name] = r, h
	}

	for _, spec := range cfg.variants {
		if b.variant == nil {
			break
		}
		vix, err := b.variant(spec)
		if err != nil {
			return nil, nil, fmt.Errorf("variant %s: %w", spec, err)
		}
		for _, m := range modes {
			r, _, err := runMode(ctx, cfg, vix, m, qs, ref, vecTruth, false)
			if err != nil {
				return nil, nil, err
			}
			res[spec+" "+m.name] = r
		}
	}

	if cfg.explain && b.explain != nil {
		for _, q := range qs[:min(max(cfg.explainN, 1), len(qs))] {
			plan, err := b.explain(ctx, q)
			if err != nil {
				return nil, nil, fmt.Errorf("explain: %w", err)
			}
			plan = vectorLiteral.ReplaceAllString(plan, "'[…]'::vector")
			fmt.Fprintf(out, "\nEXPLAIN (ANALYZE, BUFFERS) of the hybrid search for %q in workspace %q (vector literals elided):\n%s\n", q.Text, q.Workspace, plan)
		}
		if cfg.readable > 0 {
			q := qs[0]
			q.Workspace, q.Filter = "", readableFilter(cfg.readable)
			plan, err := b.explain(ctx, q)
			if err != nil {
				return nil, nil, fmt.Errorf("explain: %w", err)
			}
			plan = vectorLiteral.ReplaceAllString(plan, "'[…]'::vector")
			fmt.Fprintf(out, "\nthe same for a principal allowed %d of the workspaces:\n%s\n", cfg.readable, plan)
		}
	}
	return res, hits, nil
}

// vectorLiteral matches a vector constant in a plan.
var vectorLiteral = regexp.MustCompile(`'\[[-0-9.,e]*\]'::vector`)

// runMode runs qs in mode m against ix and scores them.
//
// Without ref, the full-text and hybrid modes count as exact when exact
// says ix is the reference itself; otherwise their recall is NaN.
func runMode(ctx context.Context, cfg config, ix memstore.Index, m mode, qs []memstore.Query,
	ref map[string][][]key, vecTruth [][]key, exact bool) (result, [][]key, error) {
	var lat []time.Duration
	var sum float64
	got := make([][]key, len(qs))
	for i, q := range qs {
		q = m.q(q)
		t0 := time.Now()
		hits, err := ix.Search(ctx, q)
		lat = append(lat, time.Since(t0))
		if err != nil {
			return result{}, nil, fmt.Errorf("%s search %q: %w", m.name, q.Text, err)
		}
		got[i] = hitKeys(hits)
		if i >= cfg.truth {
			continue
		}
		switch {
		case ref != nil:
			sum += recall(got[i], ref[m.name][i], 10)
		case m.name == "vector" && vecTruth != nil:
			sum += recall(got[i], vecTruth[i], 10)
		case m.name != "vector" && exact:
			sum++ // the embedded index's own ranking, exact by definition
		default:
			sum = math.NaN() // nothing to compare with
		}
	}
	if cfg.slowest > 0 {
		order := make([]int, len(qs))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(lat[b], lat[a]) })
		for _, i := range order[:min(cfg.slowest, len(order))] {
			progress.Warn("slow query", "mode", m.name, "ms", ms(lat[i]), "text", qs[i].Text, "workspace", qs[i].Workspace)
		}
	}
	return result{p50: pct(lat, 50), p99: pct(lat, 99), recall: sum / float64(cfg.truth)}, got, nil
}

// pct returns the p-th percentile of lat (nearest rank).
func pct(lat []time.Duration, p int) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// files groups cs (ordered by file) into per-path slices, in order.
func files(cs []memstore.Chunk) [][]memstore.Chunk {
	var out [][]memstore.Chunk
	for i := 0; i < len(cs); {
		j := i
		for j < len(cs) && cs[j].Path == cs[i].Path {
			j++
		}
		out = append(out, cs[i:j])
		i = j
	}
	return out
}

// loadBatches writes fs through ix.ReplaceMany in batches of about batch
// chunks, as the mirror writes a rebuild.
func loadBatches(ctx context.Context, ix memstore.BatchIndex, fs [][]memstore.Chunk, batch int) error {
	files := map[string][]memstore.Chunk{}
	n := 0
	for i, f := range fs {
		files[f[0].Path] = f
		if n += len(f); n >= batch || i == len(fs)-1 {
			if err := ix.ReplaceMany(ctx, files); err != nil {
				return err
			}
			clear(files)
			n = 0
		}
	}
	return nil
}

// rate formats n items over d as items per second.
func rate(n int, d time.Duration) string {
	return fmt.Sprintf("%.0f chunks/s (%d in %v)", float64(n)/d.Seconds(), n, d.Round(time.Millisecond))
}
