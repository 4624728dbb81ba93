package memstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// seedFiles writes n memory files (100 per workspace, three sections each)
// into home/memory and commits them in one commit with the git CLI.
func seedFiles(b *testing.B, home string, n int) {
	b.Helper()
	dir := filepath.Join(home, "memory")
	for i := range n {
		p := filepath.Join(dir, "workspaces", fmt.Sprintf("ws%03d", i/100), "notes", fmt.Sprintf("note-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(noteText(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	git(b, dir, "init", "-q", "-b", "main")
	git(b, dir, "add", "-A")
	git(b, dir, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "seed")
}

// seedCommits makes a repository of n commits, each changing one of 100
// files, with git fast-import.
func seedCommits(b *testing.B, home string, n int) {
	b.Helper()
	dir := filepath.Join(home, "memory")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	git(b, dir, "init", "-q", "-b", "main")
	var in bytes.Buffer
	for i := range n {
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter bench <bench@localhost> %d +0000\ndata <<EOM\nedit %d\nEOM\n", 1700000000+i, i)
		content := noteText(i)
		fmt.Fprintf(&in, "M 100644 inline workspaces/ws/notes/note-%03d.md\ndata %d\n%s\n", i%100, len(content), content)
	}
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v\n%s", err, out)
	}
	git(b, dir, "checkout", "-q", "-f", "main")
}

func git(b *testing.B, dir string, args ...string) {
	b.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir, "-c", "gc.auto=0"}, args...)...).CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

var benchWords = strings.Fields(`revenue region weekly report retention policy invoice customer order
shipping refund currency decimal schema column warehouse replica timeout quarterly audit forecast
margin discount segment cohort churn pipeline dashboard threshold anomaly latency budget`)

func noteText(i int) string {
	w := func(k int) string { return benchWords[(i*7+k*13)%len(benchWords)] }
	return fmt.Sprintf("# Note %d\n\n## Rule\n- Always %s the %s before the %s is published.\n\n## Why\n- %s %s %s reviews found %d issues.\n\n## Example\n- A %s for %s in week %d.\n",
		i, w(1), w(2), w(3), w(4), w(5), w(6), i%97, w(7), w(8), i%52)
}

// latencies collects per-operation durations and reports their median and
// 99th percentile.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(l.median()), "p50-ms")
	b.ReportMetric(ms(s[len(s)*99/100]), "p99-ms")
}

// benchWrites measures one kind of write in a store of files files.
func benchWrites(b *testing.B, files int, op func(s *memstore.Store, i int) error) {
	home := b.TempDir()
	if files > 0 {
		seedFiles(b, home, files)
	}
	s := openStore(b, home, nil)
	var lat latencies
	i := 0
	for b.Loop() {
		start := time.Now()
		if err := op(s, i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	lat.report(b)
}

func BenchmarkStore_Create(b *testing.B) {
	for _, files := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			benchWrites(b, files, func(s *memstore.Store, i int) error {
				_, err := s.Create(context.Background(), fmt.Sprintf("/memories/workspaces/ws000/notes/new-%06d.md", i), noteText(i), nil)
				return err
			})
		})
	}
}

func BenchmarkStore_StrReplace(b *testing.B) {
	for _, files := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			benchWrites(b, files, func(s *memstore.Store, i int) error {
				p := "/memories/workspaces/ws000/notes/note-00003.md"
				old, new := "# Note 3\n", "# Note 3 \n"
				if i%2 == 1 {
					old, new = new, old
				}
				_, err := s.StrReplace(context.Background(), p, old, new, nil)
				return err
			})
		})
	}
}

// BenchmarkStore_Open opens a store of 10,000 files whose index is up to date.
func BenchmarkStore_Open(b *testing.B) {
	home := b.TempDir()
	seedFiles(b, home, 10_000)
	openStore(b, home, nil).Close(context.Background()) // builds the index
	var lat latencies
	for b.Loop() {
		start := time.Now()
		s := openStore(b, home, nil)
		lat = append(lat, time.Since(start))
		s.Close(context.Background())
	}
	lat.report(b)
}

// BenchmarkStore_Reindex rebuilds the index of 10,000 files.
func BenchmarkStore_Reindex(b *testing.B) {
	home := b.TempDir()
	seedFiles(b, home, 10_000)
	s := openStore(b, home, nil)
	var lat latencies
	for b.Loop() {
		start := time.Now()
		if err := s.Reindex(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
}

// BenchmarkStore_History lists the history of one path in a repository of
// 10,000 commits (the path changed in every 100th).
func BenchmarkStore_History(b *testing.B) {
	home := b.TempDir()
	seedCommits(b, home, 10_000)
	s, err := memstore.Open(context.Background(), home, nil)
	if err != nil {
		b.Fatal(err)
	}
	var lat latencies
	for b.Loop() {
		start := time.Now()
		h, err := s.History(b.Context(), "/memories/workspaces/ws/notes/note-042.md", &memstore.HistoryOptions{Limit: 20})
		if err != nil || len(h) != 20 {
			b.Fatalf("history: %d commits, %v", len(h), err)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
}

// BenchmarkStore_Authorization measures what access control adds to a
// write (StrReplace) and a read (View) in a store of 10,000 files in 100
// workspaces, each with a workspace.yaml: the same operations, alternated
// in one run, by the local owner (no check) and by a steward of ws000
// (principal in the context). It reports both medians, the time added and
// the ratio. The store does not fsync: on a shared machine the flushes'
// latency varies by milliseconds from one write to the next and would hide
// what is measured.
func BenchmarkStore_Authorization(b *testing.B) {
	home := b.TempDir()
	seedFiles(b, home, 10_000)
	idx, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { idx.Close() })
	s, err := memstore.Open(context.Background(), home, &memstore.Options{
		Index: idx, Embedder: embedder.NewBuiltin(), Durability: memstore.DurabilityOS,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close(context.Background()) })
	acls := map[string]string{}
	for w := range 100 {
		acls[fmt.Sprintf("/memories/workspaces/ws%03d/workspace.yaml", w)] = "acl:\n  owners: [olga]\n  stewards: [\"group:analysts\"]\n  viewers: [vic]\n"
	}
	acls["/memories/workspaces/ws001/workspace.yaml"] = "acl:\n  owners: [olga]\n"
	if _, err := s.Put(context.Background(), acls, nil); err != nil {
		b.Fatal(err)
	}
	local := context.Background()
	steward := access.WithPrincipal(local, pSteward)
	for _, op := range []struct {
		name string
		run  func(ctx context.Context, p string, i int) error
	}{
		{"write", func(ctx context.Context, p string, i int) error {
			old, new := "# Note", "# Note:"
			if i%2 == 1 {
				old, new = new, old
			}
			_, err := s.StrReplace(ctx, p, old, new, nil)
			return err
		}},
		{"read", func(ctx context.Context, p string, _ int) error {
			_, err := s.View(ctx, p, nil)
			return err
		}},
	} {
		b.Run(op.name, func(b *testing.B) {
			var asLocal, asSteward latencies
			i := 0
			for b.Loop() {
				calls := []struct {
					ctx context.Context
					p   string
					lat *latencies
				}{
					{local, "/memories/workspaces/ws000/notes/note-00003.md", &asLocal},
					{steward, "/memories/workspaces/ws000/notes/note-00004.md", &asSteward},
				}
				if i%2 == 1 {
					// Alternate who goes first: the second of two writes
					// in a row pays for the first one's flushes.
					slices.Reverse(calls)
				}
				for _, c := range calls {
					start := time.Now()
					if err := op.run(c.ctx, c.p, i); err != nil {
						b.Fatal(err)
					}
					*c.lat = append(*c.lat, time.Since(start))
				}
				i++
			}
			l, p := asLocal.median(), asSteward.median()
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(l), "local-p50-ms")
			b.ReportMetric(ms(p), "principal-p50-ms")
			b.ReportMetric(ms(p-l), "added-ms")
			b.ReportMetric(float64(p)/float64(l), "ratio")
			b.Logf("%s: p50 local %.3f ms, with a principal %.3f ms, added %.3f ms, ratio %.2f (%d calls each)",
				op.name, ms(l), ms(p), ms(p-l), float64(p)/float64(l), len(asLocal))
		})
	}
}

// median returns the median of l.
func (l latencies) median() time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	return s[len(s)/2]
}
