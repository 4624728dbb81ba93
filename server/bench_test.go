package server_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
	"github.com/selmem/selmem/server"
)

// seeded is a home with 10,000 memory files and an up-to-date index,
// made once per test binary.
var seeded struct {
	once sync.Once
	home string
	err  error
}

var benchWords = strings.Fields(`revenue region weekly report retention policy invoice customer order
shipping refund currency decimal schema column warehouse replica timeout quarterly audit forecast
margin discount segment cohort churn pipeline dashboard threshold anomaly latency budget`)

func noteText(i int) string {
	w := func(k int) string { return benchWords[(i*7+k*13)%len(benchWords)] }
	return fmt.Sprintf("# Note %d\n\n## Rule\n- Always %s the %s before the %s is published.\n\n## Why\n- %s %s %s reviews found %d issues.\n",
		i, w(1), w(2), w(3), w(4), w(5), w(6), i%97)
}

// seededHome returns a home with n = 10,000 files committed in one commit
// and indexed by `selmem reindex`.
func seededHome(b *testing.B) string {
	b.Helper()
	seeded.once.Do(func() {
		home, err := os.MkdirTemp("", "selmem-bench-")
		if err != nil {
			seeded.err = err
			return
		}
		seeded.home = home
		dir := filepath.Join(home, "memory")
		for i := range 10_000 {
			p := filepath.Join(dir, "workspaces", fmt.Sprintf("ws%03d", i/100), "notes", fmt.Sprintf("note-%05d.md", i))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				seeded.err = err
				return
			}
			if err := os.WriteFile(p, []byte(noteText(i)), 0o644); err != nil {
				seeded.err = err
				return
			}
		}
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "seed"}} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				seeded.err = fmt.Errorf("git %v: %v\n%s", args, err, out)
				return
			}
		}
		cmd := exec.Command(bin, "reindex")
		cmd.Env = env(home)
		if out, err := cmd.CombinedOutput(); err != nil {
			seeded.err = fmt.Errorf("reindex: %v\n%s", err, out)
		}
	})
	if seeded.err != nil {
		b.Fatal(seeded.err)
	}
	return seeded.home
}

// median reports the median and p99 of ds in milliseconds.
func median(b *testing.B, ds []time.Duration) {
	b.Helper()
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms")
	b.ReportMetric(ms(ds[min(len(ds)-1, len(ds)*99/100)]), "p99-ms")
}

// BenchmarkServe_ColdStart measures process start to the answer of the
// first tools/list over stdio, with 10,000 files and an up-to-date index.
func BenchmarkServe_ColdStart(b *testing.B) {
	home := seededHome(b)
	var ds []time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(bin, "serve")
		cmd.Env = env(home)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		r := bufio.NewReader(stdout)
		_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatalf("no tools/list answer: %v", err)
			}
			if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":2,`) {
				break
			}
		}
		ds = append(ds, time.Since(start))
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	median(b, ds)
}

// BenchmarkServe_HTTPView measures memory_view calls per second over
// streamable HTTP with 8 concurrent clients (sessions).
func BenchmarkServe_HTTPView(b *testing.B) {
	home := seededHome(b)
	h := startHTTP(b, home)
	const clients = 8
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		sessions[i] = connectHTTP(b, h.url, "2025-11-25")
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, cs := range sessions {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				p := fmt.Sprintf("/memories/workspaces/ws%03d/notes/note-%05d.md", (i%10_000)/100, i%10_000)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_view", Arguments: map[string]any{"path": p}})
				if err != nil || res.IsError {
					b.Errorf("view %s: %v %v", p, err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

// BenchmarkServe_Search compares memory_search over MCP (stdio, the built
// binary) with the store's own Search (plus result formatting) in this
// process, on the same 10,000-file memory.
func BenchmarkServe_Search(b *testing.B) {
	home := seededHome(b)
	queries := []string{"retention policy", "weekly revenue report", "refund currency", "warehouse replica timeout", "churn cohort"}

	b.Run("store", func(b *testing.B) {
		idx, err := sqliteindex.Open(filepath.Join(home, "index", "index.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer idx.Close()
		s, err := memstore.Open(context.Background(), home, &memstore.Options{Index: idx, Embedder: embedder.NewBuiltin()})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close(context.Background())
		var ds []time.Duration
		i := 0
		for b.Loop() {
			q := queries[i%len(queries)]
			i++
			start := time.Now()
			res, err := s.Search(context.Background(), memstore.SearchRequest{Query: q})
			if err != nil {
				b.Fatal(err)
			}
			_ = memstore.FormatResults(memstore.Results(res.Hits, q, time.Now()))
			ds = append(ds, time.Since(start))
		}
		median(b, ds)
	})
	b.Run("mcp-stdio", func(b *testing.B) {
		cmd := exec.Command(bin, "serve")
		cmd.Env = env(home)
		cs, err := newClient().Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		var ds []time.Duration
		i := 0
		for b.Loop() {
			q := queries[i%len(queries)]
			i++
			start := time.Now()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": q}})
			if err != nil || res.IsError {
				b.Fatalf("search: %v %v", err, res)
			}
			ds = append(ds, time.Since(start))
		}
		median(b, ds)
	})
}

var heapProfile = flag.String("heapprofile", "", "BenchmarkServe_HTTPSessionChurn writes the live heap after the load here")

// BenchmarkServe_HTTPSessionChurn runs the HTTP server in this process
// under the load of bench/httpload — clients that create, view, search
// and delete notes and open a new session every 40 calls, a quarter of
// them vanishing without DELETE — then sweeps idle sessions, and reports
// the live heap and the sessions left. Run with -memprofile to see what
// the heap holds after the load.
func BenchmarkServe_HTTPSessionChurn(b *testing.B) {
	home := b.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "index"), 0o755); err != nil {
		b.Fatal(err)
	}
	idx, err := sqliteindex.Open(filepath.Join(home, "index", "index.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	store, err := memstore.Open(context.Background(), home, &memstore.Options{Index: idx, Embedder: embedder.NewBuiltin()})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close(context.Background())
	clock := &clock{now: time.Now()}
	cfg := server.DefaultConfig()
	cfg.Home, cfg.HTTP.Addr = home, "127.0.0.1:0"
	h, err := server.Listen(server.NewMCPServer(store, cfg, &server.Options{Transport: server.TransportHTTP}), cfg.HTTP, &server.HTTPOptions{Now: clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	url := "http://" + h.Addr() + server.PathMCP

	const clients, perSession = 16, 40
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for c := range clients {
		wg.Go(func() {
			for i := int64(0); next.Load() < int64(b.N); {
				cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					b.Error(err)
					return
				}
				for k := 0; k < perSession && next.Add(1) <= int64(b.N); k++ {
					i++
					p := fmt.Sprintf("/memories/workspaces/load/notes/c%02d-%d.md", c, i)
					for _, call := range []struct {
						name string
						args map[string]any
					}{
						{"memory_create", map[string]any{"path": p, "file_text": noteText(int(i))}},
						{"memory_search", map[string]any{"query": benchWords[int(i)%len(benchWords)]}},
						{"memory_delete", map[string]any{"path": p}},
					} {
						if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.name, Arguments: call.args}); err != nil {
							b.Error(err)
							return
						}
					}
				}
				_ = cs.Close()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	clock.advance(cfg.HTTP.SessionIdleTTL)
	h.SweepIdleSessions()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
	if *heapProfile != "" {
		f, err := os.Create(*heapProfile)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(h.Sessions()), "sessions")
}
