package refresh

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/schemas"
)

// salesCSV is a weekly sales extract of n rows and ten columns; seed
// changes every value so that each version is new data.
func salesCSV(n, seed int) string {
	regions := []string{"EMEA", "AMER", "APAC", "LATAM"}
	products := []string{"basic", "pro", "team", "enterprise", "addon"}
	var b strings.Builder
	b.WriteString("order_id,day,region,product,channel,units,price,amount,discount,returned\n")
	for i := range n {
		units := 1 + (i*7+seed)%9
		price := 10 + float64((i*13+seed*5)%900)/10
		fmt.Fprintf(&b, "%d,2026-11-%02d,%s,%s,%s,%d,%.2f,%.2f,%.2f,%t\n", 100000+i, 1+(i+seed)%28, regions[(i+seed)%4], products[(i*3+seed)%5],
			[]string{"web", "store"}[(i+seed)%2], units, price, float64(units)*price, float64((i+seed)%20)/100, (i+seed)%17 == 0)
	}
	return b.String()
}

// processCPU is the CPU time (user and system) the process has used. Load
// on the machine inflates wall times but hardly this.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRefresh measures a refresh of a file source at 10,000 and
// 100,000 rows (and at 10,000 with durability os, to show what the commit's
// flushes cost), alternating between two versions so every refresh commits,
// and reports the median and p99 of the whole and of each phase, beside
// the baseline of reading the same file with the profiler's reader alone
// (in the same process), the throughput, and the process's CPU time per
// refresh (cpu-: every goroutine's, the collector's included).
func BenchmarkRefresh(b *testing.B) {
	for _, c := range []struct {
		rows       int
		durability memstore.Durability
	}{{10_000, memstore.DurabilityFsync}, {100_000, memstore.DurabilityFsync}, {10_000, memstore.DurabilityOS}} {
		rows := c.rows
		b.Run(fmt.Sprintf("rows=%d/durability=%s", rows, c.durability), func(b *testing.B) {
			ctx := context.Background()
			home, data := b.TempDir(), b.TempDir()
			// As selmem serve opens it: the embedded index and the
			// built-in embedder.
			idx, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			store, err := memstore.Open(ctx, home, &memstore.Options{Index: idx, Embedder: embedder.NewBuiltin(), Durability: c.durability})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close(ctx)
			snaps, _ := OpenSnapshots(filepath.Join(home, "data"), 3)
			r := New(store, snaps, &Options{Access: schemas.Access{Roots: []string{data}}})
			versions := []string{salesCSV(rows, 1), salesCSV(rows, 2)}
			path := filepath.Join(data, "sales.csv")
			os.WriteFile(path, []byte(versions[0]), 0o644)
			store.Put(ctx, map[string]string{
				ConnectorPath("sales", "weekly"): "kind: file\npath: " + path + "\n",
				BindingPath("sales", "dash"):     "connector: weekly\n",
			}, nil)
			var total, load, check, snap, prof, commit, base, cpu []float64
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				os.WriteFile(path, []byte(versions[(i+1)%2]), 0o644)
				t0 := time.Now()
				tab, err := Load(ctx, profiler.FileSource{Path: path}, 0)
				if err != nil {
					b.Fatal(err)
				}
				tab.Release()
				base = append(base, ms(time.Since(t0)))
				b.StartTimer()
				c0 := processCPU()
				res, err := r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
				cpu = append(cpu, ms(processCPU()-c0))
				if err != nil {
					b.Fatal(err)
				}
				if res.Outcome != OutcomeRefreshed {
					b.Fatalf("outcome %s", res.Outcome)
				}
				t := res.Timings
				total, load, check, snap, prof, commit = append(total, t.Total), append(load, t.Load), append(check, t.Check),
					append(snap, t.Snapshot), append(prof, t.Profile), append(commit, t.Commit)
			}
			p := func(xs []float64, q float64) float64 {
				s := slices.Clone(xs)
				slices.Sort(s)
				return s[min(len(s)-1, int(q*float64(len(s))))]
			}
			b.ReportMetric(p(total, 0.5), "p50-ms")
			b.ReportMetric(p(total, 0.99), "p99-ms")
			b.ReportMetric(p(load, 0.5), "load-p50-ms")
			b.ReportMetric(p(check, 0.5), "check-p50-ms")
			b.ReportMetric(p(snap, 0.5), "snapshot-p50-ms")
			b.ReportMetric(p(prof, 0.5), "profile-p50-ms")
			b.ReportMetric(p(commit, 0.5), "commit-p50-ms")
			b.ReportMetric(p(cpu, 0.5), "cpu-p50-ms")
			b.ReportMetric(p(base, 0.5), "baseline-read-p50-ms")
			b.ReportMetric(p(total, 0.5)/p(base, 0.5), "x-baseline")
			b.ReportMetric(float64(len(versions[0]))/1e6/(p(total, 0.5)/1000), "MB/s")
		})
	}
}
