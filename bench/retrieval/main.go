// Command retrieval measures how well selmem's search finds the right
// memory: it loads labelled sets (memory files, queries, relevant
// sections), commits the files into a fresh memory repository, indexes them
// through the real store with the embedded index, runs every query through
// memstore.Store.Search (the path of memory_search and `selmem search`),
// and prints recall@1/5/10, MRR and nDCG@10 per set and query class, the
// share of nonsense queries (of rare words, and of common ones) that
// return any hit, the labelled queries the relevance floor loses (a
// top-10 relevant hit the no-floor variant finds, counted and listed for
// the first variant), and search latency. A
// BM25-only baseline over the same chunks (SQLite FTS5, porter stemmer,
// stop words removed, OR of the remaining words) runs in the same
// process, so every ranking is measured against it.
//
//	go run ./bench/retrieval                      # the dev sets
//	go run ./bench/retrieval -dir path/to/set     # a set in the on-disk format
//	go run ./bench/retrieval -write out/          # dump the generated sets
//
// The dev sets are the generated ones (package devset), deterministic for
// a -seed, and the natural sets stored in testdata/retrieval/natural, one
// a subdirectory (-natural; run from the repository root). A
// set on disk is a directory holding memory/ (files by repository-relative
// path, e.g. memory/workspaces/w/notes/s1.md) and queries.jsonl (one
// devset.Query a line). A hit is relevant when its path equals a relevant
// reference's and the last levels of its heading path are the reference's
// heading.
//
// -variants runs ranking ablations (see variants in ranking.go); each
// variant searches the same index. -dsn also runs the first variant over
// the Postgres backend (a database with pgvector; the tables go in schema
// selmem_retrieval, emptied first) and prints the mean share of the
// embedded index's top 10 that Postgres's top 10 holds. Logs go to
// stderr; the report to stdout.
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
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/selmem/selmem/bench/retrieval/devset"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/pgindex"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

type config struct {
	dirs          []string
	seed          uint64
	conversations int
	workspaces    int
	nonsense      int
	variants      []string
	write         string
	keep          string
	perQuery      string
	dsn           string
	natural       string
}

func main() {
	var cfg config
	var dirs, variants string
	flag.StringVar(&dirs, "dir", "", "comma-separated set directories to evaluate instead of the generated sets")
	flag.Uint64Var(&cfg.seed, "seed", 12, "seed of the generated sets")
	flag.IntVar(&cfg.conversations, "conversations", 20, "generated conversations")
	flag.IntVar(&cfg.workspaces, "workspaces", 20, "generated product workspaces")
	flag.IntVar(&cfg.nonsense, "nonsense", 200, "nonsense queries of each kind, rare words and common ones (expected to match nothing)")
	flag.StringVar(&variants, "variants", "default", "comma-separated ranking variants to evaluate (all: every variant)")
	flag.StringVar(&cfg.write, "write", "", "write the generated set to this directory and exit")
	flag.StringVar(&cfg.keep, "keep", "", "build the memory in this directory and keep it (default: a temporary one)")
	flag.StringVar(&cfg.perQuery, "per-query", "", "write per-query ranks of the first variant and the baseline to this file")
	flag.StringVar(&cfg.natural, "natural", filepath.Join("testdata", "retrieval", "natural"), "directory of stored natural sets, one a subdirectory, each evaluated as a memory beside the generated sets (empty: none)")
	flag.StringVar(&cfg.dsn, "dsn", "", "Postgres database with pgvector: also run the first variant on the Postgres backend")
	flag.Parse()
	if dirs != "" {
		cfg.dirs = strings.Split(dirs, ",")
	}
	cfg.variants = strings.Split(variants, ",")
	if variants == "all" {
		cfg.variants = variantNames()
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := run(context.Background(), cfg, os.Stdout, log); err != nil {
		fmt.Fprintln(os.Stderr, "retrieval:", err)
		os.Exit(1)
	}
}

// memory is one memory the harness builds and searches, with the sets
// whose files it holds.
type memory struct {
	name string
	set  devset.Set
}

// load returns the memories to evaluate: the sets of -dir merged into
// one, or else the generated sets and, apart, each stored natural set (a
// memory of its own, as a user's would be), each with its nonsense
// queries.
func load(cfg config) ([]memory, error) {
	var mems []memory
	if len(cfg.dirs) > 0 {
		var set devset.Set
		for _, d := range cfg.dirs {
			s, err := devset.Read(d)
			if err != nil {
				return nil, err
			}
			set.Merge(s)
		}
		mems = append(mems, memory{"dir", set})
	} else {
		var set devset.Set
		set.Merge(devset.Conversations(cfg.seed, cfg.conversations))
		set.Merge(devset.Workspaces(cfg.seed+1, cfg.workspaces))
		mems = append(mems, memory{"generated", set})
		if cfg.natural != "" {
			dirs, err := os.ReadDir(cfg.natural)
			if err != nil {
				return nil, err
			}
			for _, d := range dirs {
				if !d.IsDir() {
					continue
				}
				s, err := devset.Read(filepath.Join(cfg.natural, d.Name()))
				if err != nil {
					return nil, err
				}
				mems = append(mems, memory{"natural/" + d.Name(), s})
			}
		}
	}
	for i := range mems {
		set := &mems[i].set
		var wss []string
		for _, q := range set.Queries {
			if q.Workspace != "" && !slices.Contains(wss, q.Workspace) {
				wss = append(wss, q.Workspace)
			}
		}
		if cfg.nonsense > 0 {
			set.Queries = append(set.Queries, devset.Nonsense(cfg.seed+2, cfg.nonsense, wss, set.Files)...)
			set.Queries = append(set.Queries, devset.CommonNonsense(cfg.seed+3, cfg.nonsense, wss, set.Files)...)
		}
	}
	return mems, nil
}

func run(ctx context.Context, cfg config, out io.Writer, log *slog.Logger) error {
	mems, err := load(cfg)
	if err != nil {
		return err
	}
	if cfg.write != "" {
		return mems[0].set.Write(cfg.write)
	}
	base := cfg.keep
	if base == "" {
		if base, err = os.MkdirTemp("", "selmem-retrieval-"); err != nil {
			return err
		}
		defer os.RemoveAll(base)
	}
	for i, m := range mems {
		home, perQuery := base, cfg.perQuery
		if len(mems) > 1 {
			home = filepath.Join(base, filepath.FromSlash(m.name))
			if perQuery != "" {
				perQuery += "." + strings.ReplaceAll(m.name, "/", "-")
			}
			if i > 0 {
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "# memory %q\n", m.name)
		}
		if err := evalMemory(ctx, cfg, home, perQuery, m.set, out, log); err != nil {
			return fmt.Errorf("memory %s: %w", m.name, err)
		}
	}
	return nil
}

// evalMemory builds set's memory in home, evaluates the baseline and
// cfg's variants on it, and prints their report; with perQuery, it
// writes the per-query ranks there.
func evalMemory(ctx context.Context, cfg config, home, perQuery string, set devset.Set, out io.Writer, log *slog.Logger) error {
	dbPath, err := prepare(home, set)
	if err != nil {
		return err
	}
	labelled := 0
	for _, q := range set.Queries {
		if len(q.Relevant) > 0 {
			labelled++
		}
	}
	fmt.Fprintf(out, "memory: %d files; queries: %d labelled, %d nonsense\n", len(set.Files), labelled, len(set.Queries)-labelled)

	var reports []report
	for k, name := range cfg.variants {
		v, ok := variantByName(name)
		if !ok {
			return fmt.Errorf("unknown variant %q (known: %s)", name, strings.Join(variantNames(), ", "))
		}
		start := time.Now()
		r, err := evalVariant(ctx, home, sqliteOpener(dbPath), v, set, log)
		if err != nil {
			return fmt.Errorf("variant %s: %w", name, err)
		}
		if k == 0 {
			fmt.Fprintf(out, "indexed and searched in %v\n", time.Since(start).Round(time.Millisecond))
		}
		reports = append(reports, r)
	}
	if cfg.dsn != "" && len(reports) > 0 {
		v, _ := variantByName(cfg.variants[0])
		r, err := evalPostgres(ctx, home, cfg.dsn, v, set, log)
		if err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		fmt.Fprintf(out, "postgres: top-10 overlap with the embedded index, %s, mean over %d queries: %.3f\n",
			v.name, len(set.Queries), overlap(reports[0], r))
		reports = append(reports, r)
	}
	base, err := evalBaseline(ctx, dbPath, set)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	reports = append([]report{base}, reports...)
	ref, err := floorReference(ctx, home, dbPath, set, reports, log)
	if err != nil {
		return fmt.Errorf("variant %s: %w", noFloor, err)
	}
	printReports(out, set.Queries, reports, ref)
	if ref != nil {
		printLosers(out, set.Queries, reports[1], *ref)
	}
	if perQuery != "" && len(reports) > 1 {
		return writePerQuery(perQuery, set, reports[1], reports[0])
	}
	return nil
}

// noFloor is the variant without a relevance floor, nor a judgement of
// guesses (memstore.Ranking.GuessShare), against which the report counts
// the labelled queries a floor loses.
const noFloor = "no-floor"

// floorReference returns the report of the no-floor variant, running it
// when reports lack it, or nil when the set has no nonsense query.
func floorReference(ctx context.Context, home, dbPath string, set devset.Set, reports []report, log *slog.Logger) (*report, error) {
	if !slices.ContainsFunc(set.Queries, func(q devset.Query) bool { return q.Class == "nonsense" }) {
		return nil, nil
	}
	if k := slices.IndexFunc(reports, func(r report) bool { return r.name == noFloor }); k >= 0 {
		return &reports[k], nil
	}
	v, _ := variantByName(noFloor)
	r, err := evalVariant(ctx, home, sqliteOpener(dbPath), v, set, log)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// prepare commits set's files into the memory of home and returns the
// path of its embedded index, in a directory that exists.
func prepare(home string, set devset.Set) (string, error) {
	if err := commitFiles(filepath.Join(home, "memory"), set.Files); err != nil {
		return "", err
	}
	dbPath := filepath.Join(home, "index", "index.db")
	return dbPath, os.MkdirAll(filepath.Dir(dbPath), 0o755)
}

// commitFiles writes files into a new git repository at dir and commits
// them on main, as a memory that was written over time would be.
func commitFiles(dir string, files map[string]string) error {
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=retrieval", "-c", "user.email=retrieval@selmem.local", "commit", "-q", "-m", "retrieval set"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, b)
		}
	}
	return nil
}

// opener opens an index with a ranking.
type opener func(r *memstore.Ranking, log *slog.Logger) (memstore.Index, error)

// sqliteOpener opens the embedded index at dbPath.
func sqliteOpener(dbPath string) opener {
	return func(r *memstore.Ranking, log *slog.Logger) (memstore.Index, error) {
		return sqliteindex.Open(dbPath, &sqliteindex.Options{Logger: log, Ranking: r})
	}
}

// pgSchema holds the Postgres backend's tables for -dsn.
const pgSchema = "selmem_retrieval"

// evalPostgres runs v over the Postgres backend at dsn, in pgSchema,
// emptied first, and names the report after v and the backend.
func evalPostgres(ctx context.Context, home, dsn string, v variant, set devset.Set, log *slog.Logger) (report, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return report{}, err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgSchema+" CASCADE"); err != nil {
		return report{}, err
	}
	dim := embedder.NewBuiltin().Dim()
	r, err := evalVariant(ctx, home, func(r *memstore.Ranking, log *slog.Logger) (memstore.Index, error) {
		return pgindex.Open(pool, &pgindex.Options{Dim: dim, Schema: pgSchema, Logger: log, Ranking: r}), nil
	}, v, set, log)
	r.name = v.name + " (postgres)"
	return r, err
}

// overlap returns the mean share of a's top 10 that b's holds, over the
// queries either returns hits for.
func overlap(a, b report) float64 {
	var sum float64
	n := 0
	for i := range a.results {
		x, y := a.results[i].keys, b.results[i].keys
		if len(x) == 0 && len(y) == 0 {
			continue
		}
		shared := 0
		for _, k := range x {
			if slices.Contains(y, k) {
				shared++
			}
		}
		sum += float64(shared) / float64(max(len(x), len(y)))
		n++
	}
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}

// evalVariant opens the store over the index open gives with v's
// ranking (indexing the memory the first time) and runs every query.
func evalVariant(ctx context.Context, home string, open opener, v variant, set devset.Set, log *slog.Logger) (report, error) {
	idx, err := open(v.ranking(), log)
	if err != nil {
		return report{}, err
	}
	st, err := memstore.Open(ctx, home, &memstore.Options{Index: idx, Embedder: embedder.NewBuiltin(), Logger: log, MinSimilarity: v.floor, Thesaurus: v.thesaurus(), Associations: v.associations()})
	if err != nil {
		idx.Close()
		return report{}, err
	}
	defer func() {
		st.Close(ctx)
		idx.Close()
	}()
	// Load the index into memory before timing.
	if _, err := st.Search(ctx, memstore.SearchRequest{Query: "warm up"}); err != nil {
		return report{}, err
	}
	r := report{name: v.name, results: make([]result, len(set.Queries))}
	for i, q := range set.Queries {
		start := time.Now()
		res, err := st.Search(ctx, memstore.SearchRequest{Query: q.Text, Workspace: q.Workspace, Limit: 10})
		if err != nil {
			return r, fmt.Errorf("query %s: %w", q.ID, err)
		}
		keys := hitKeys(res.Hits)
		r.results[i] = judge(q, keys, time.Since(start))
		r.results[i].keys = keys
	}
	return r, nil
}

// hitKey is what relevance is judged on.
type hitKey struct{ path, heading string }

func hitKeys(hits []memstore.Hit) []hitKey {
	out := make([]hitKey, len(hits))
	for i, h := range hits {
		out[i] = hitKey{h.Path, h.Heading}
	}
	return out
}

// result is one query's outcome.
type result struct {
	ranks   []int // 1-based rank at which each relevant reference was first found, 0 if not in the hits
	keys    []hitKey
	hits    int
	latency time.Duration
}

// judge finds the rank of each of q's relevant references in hits.
func judge(q devset.Query, hits []hitKey, d time.Duration) result {
	r := result{ranks: make([]int, len(q.Relevant)), hits: len(hits), latency: d}
	for i, h := range hits {
		for k, ref := range q.Relevant {
			if r.ranks[k] == 0 && h.path == ref.Path && headingEnds(h.heading, ref.Heading) {
				r.ranks[k] = i + 1
				break
			}
		}
	}
	return r
}

// headingEnds reports whether the heading path ends with the heading
// want: its last levels are want's ("" matches any).
func headingEnds(heading, want string) bool {
	return want == "" || heading == want || strings.HasSuffix(heading, " › "+want)
}

// report is one ranking's results, in query order.
type report struct {
	name    string
	results []result
}

// metrics are averages over a group of labelled queries.
type metrics struct {
	n                               int
	r1, r5, r10, mrr, ndcg, anyHits float64
	p50, p99                        time.Duration
}

func (r result) recall(k int) float64 {
	found := 0
	for _, x := range r.ranks {
		if x > 0 && x <= k {
			found++
		}
	}
	return float64(found) / float64(len(r.ranks))
}

func (r result) rr() float64 {
	best := 0
	for _, x := range r.ranks {
		if x > 0 && (best == 0 || x < best) {
			best = x
		}
	}
	if best == 0 {
		return 0
	}
	return 1 / float64(best)
}

// ndcg is binary-relevance nDCG@10.
func (r result) ndcg() float64 {
	var dcg, ideal float64
	for i, x := range r.ranks {
		if x > 0 && x <= 10 {
			dcg += 1 / log2(float64(x)+1)
		}
		if i < 10 {
			ideal += 1 / log2(float64(i)+2)
		}
	}
	return dcg / ideal
}

func summarise(rs []result) metrics {
	var m metrics
	var lat []time.Duration
	for _, r := range rs {
		lat = append(lat, r.latency)
		if r.hits > 0 {
			m.anyHits++
		}
		if len(r.ranks) == 0 {
			continue
		}
		m.n++
		m.r1 += r.recall(1)
		m.r5 += r.recall(5)
		m.r10 += r.recall(10)
		m.mrr += r.rr()
		m.ndcg += r.ndcg()
	}
	if len(rs) > 0 {
		m.anyHits /= float64(len(rs))
	}
	if m.n > 0 {
		n := float64(m.n)
		m.r1, m.r5, m.r10, m.mrr, m.ndcg = m.r1/n, m.r5/n, m.r10/n, m.mrr/n, m.ndcg/n
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		m.p50 = lat[len(lat)/2]
		m.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return m
}

// printReports prints, per group (all labelled queries, each set, each
// class), one line per ranking; for the nonsense queries the share
// returning any hit and, when ref (the no-floor variant) is given, the
// labelled queries losing a relevant hit against it (lost).
func printReports(out io.Writer, qs []devset.Query, reports []report, ref *report) {
	type group struct {
		name string
		idx  []int
	}
	var groups []group
	add := func(name string, i int) {
		for g := range groups {
			if groups[g].name == name {
				groups[g].idx = append(groups[g].idx, i)
				return
			}
		}
		groups = append(groups, group{name, []int{i}})
	}
	for i := range reports[0].results {
		q := qs[i]
		if q.Class == "nonsense" {
			// By set (rare words, common words), each set of another
			// name under "nonsense".
			name := q.Set
			if !strings.HasPrefix(name, "nonsense") {
				name = "nonsense"
			}
			add(name, i)
			continue
		}
		add("all labelled", i)
		add("set "+q.Set, i)
		add(q.Set+" / "+q.Class, i)
	}
	slices.SortStableFunc(groups, func(a, b group) int {
		rank := func(n string) int {
			switch {
			case n == "all labelled":
				return 0
			case strings.HasPrefix(n, "set "):
				return 1
			case strings.HasPrefix(n, "nonsense"):
				return 3
			}
			return 2
		}
		return cmp.Or(cmp.Compare(rank(a.name), rank(b.name)), strings.Compare(a.name, b.name))
	})
	width := 0
	for _, r := range reports {
		width = max(width, len(r.name))
	}
	for _, g := range groups {
		nonsense := strings.HasPrefix(g.name, "nonsense")
		if nonsense {
			fmt.Fprintf(out, "\n%s (%d queries): share returning any hit\n", g.name, len(g.idx))
		} else {
			fmt.Fprintf(out, "\n%s (%d queries)\n  %-*s  %6s %6s %6s %6s %7s %8s %8s\n", g.name, len(g.idx), width, "ranking", "R@1", "R@5", "R@10", "MRR", "nDCG10", "p50", "p99")
		}
		for _, r := range reports {
			rs := make([]result, len(g.idx))
			for k, i := range g.idx {
				rs[k] = r.results[i]
			}
			m := summarise(rs)
			if nonsense {
				fmt.Fprintf(out, "  %-*s  %.3f", width, r.name, m.anyHits)
				if ref != nil {
					fmt.Fprintf(out, "  (labelled queries losing a top-10 relevant hit against %s: %d)", noFloor, len(lost(r, *ref)))
				}
				fmt.Fprintln(out)
				continue
			}
			fmt.Fprintf(out, "  %-*s  %6.3f %6.3f %6.3f %6.3f %7.3f %8s %8s\n", width, r.name, m.r1, m.r5, m.r10, m.mrr, m.ndcg,
				m.p50.Round(10*time.Microsecond), m.p99.Round(10*time.Microsecond))
		}
	}
}

// lost returns the indexes of the labelled queries that find fewer
// relevant hits in their top 10 under r than under ref.
func lost(r, ref report) []int {
	var out []int
	for i, res := range r.results {
		if len(res.ranks) > 0 && res.recall(10) < ref.results[i].recall(10) {
			out = append(out, i)
		}
	}
	return out
}

// maxLosers bounds the losing query texts printReports lists.
const maxLosers = 20

// printLosers lists the distinct texts of the labelled queries that r
// loses against ref, most frequent first, with how many queries (one per
// workspace searched) each stands for.
func printLosers(out io.Writer, qs []devset.Query, r, ref report) {
	idx := lost(r, ref)
	if len(idx) == 0 {
		return
	}
	count := map[string]int{}
	var texts []string
	for _, i := range idx {
		t := qs[i].Class + ": " + qs[i].Text
		if count[t] == 0 {
			texts = append(texts, t)
		}
		count[t]++
	}
	slices.SortStableFunc(texts, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
	fmt.Fprintf(out, "\n%s: queries losing a top-10 relevant hit against %s (%d distinct)\n", r.name, ref.name, len(texts))
	for _, t := range texts[:min(len(texts), maxLosers)] {
		fmt.Fprintf(out, "  %3d  %s\n", count[t], t)
	}
}

func log2(x float64) float64 { return math.Log2(x) }

// writePerQuery writes one line per labelled query: id, class, the best
// rank of a relevant hit under r and under base (0: not found), the number of
// hits under r, the query.
func writePerQuery(path string, set devset.Set, r, base report) error {
	var b strings.Builder
	best := func(res result) int {
		x := 0
		for _, k := range res.ranks {
			if k > 0 && (x == 0 || k < x) {
				x = k
			}
		}
		return x
	}
	for i, q := range set.Queries {
		fmt.Fprintf(&b, "%s\t%s\t%d\t%d\t%d\t%s\n", q.ID, q.Class, best(r.results[i]), best(base.results[i]), r.results[i].hits, q.Text)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
