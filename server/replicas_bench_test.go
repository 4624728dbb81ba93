package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/internal/pgtest"
)

// BenchmarkReplicas measures, through the real binary over HTTP with a
// Postgres index: a memory_create on a server without a remote (the
// baseline) and on a replica that pushes to a git server on loopback, and
// the convergence lag from one replica's acknowledgement to a
// memory_search on another replica finding the write. It prints medians
// and 99th percentiles.
//
//	go test ./server -run '^$' -bench Replicas -benchtime 50x
func BenchmarkReplicas(b *testing.B) {
	dsn := pgtest.DSN(b)
	remote := gittest.NewServer(b)
	pg := []string{"SELMEM_INDEX_BACKEND=postgres", "SELMEM_INDEX_DSN=" + dsn}
	solo := startHTTP(b, b.TempDir(), pg...)
	withRemote := append(pg, "SELMEM_REMOTE_URL="+remote.URL, "SELMEM_REMOTE_POLL=5s")
	a := startHTTP(b, b.TempDir(), withRemote...)
	other := startHTTP(b, b.TempDir(), withRemote...)
	soloCS, aCS, otherCS := connectHTTP(b, solo.url, ""), connectHTTP(b, a.url, ""), connectHTTP(b, other.url, "")

	var baseline, pushed, lag []time.Duration
	b.ResetTimer()
	for i := range b.N {
		marker := fmt.Sprintf("zqbench%05d", i)
		args := map[string]any{"path": fmt.Sprintf("/memories/notes/bench-%05d.md", i),
			"file_text": fmt.Sprintf("# Bench %d\n\nThe marker is %s.\n", i, marker)}
		baseline = append(baseline, timedCall(b, soloCS, "memory_create", args))
		pushed = append(pushed, timedCall(b, aCS, "memory_create", args))
		acked := time.Now()
		for {
			text, _, _ := call(b, otherCS, "memory_search", map[string]any{"query": marker})
			if strings.Contains(text, fmt.Sprintf("bench-%05d.md", i)) {
				lag = append(lag, time.Since(acked))
				break
			}
			if time.Since(acked) > time.Minute {
				b.Fatalf("write %d never reached the other replica", i)
			}
		}
	}
	b.StopTimer()
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"write-no-remote", baseline}, {"write-pushed", pushed}, {"convergence", lag}} {
		p50, p99 := percentiles(m.d)
		b.ReportMetric(float64(p50.Microseconds())/1000, m.name+"-p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, m.name+"-p99-ms")
	}
	p50b, _ := percentiles(baseline)
	p50p, _ := percentiles(pushed)
	b.ReportMetric(float64(p50p)/float64(p50b), "push-ratio")
}

// timedCall runs a write and returns how long it took; a refused write
// fails the benchmark.
func timedCall(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) time.Duration {
	b.Helper()
	start := time.Now()
	text, commit, isErr, err := toolCall(context.Background(), cs, name, args)
	d := time.Since(start)
	if err != nil || isErr || commit == "" {
		b.Fatalf("%s: %v %s", name, err, text)
	}
	return d
}

// percentiles returns the median and the 99th percentile of ds.
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}
