// Command httpload measures the memory of `selmem serve --http` under load.
//
// It starts the given selmem binary on 127.0.0.1 with a fresh home, runs
// concurrent MCP clients (the official Go SDK over streamable HTTP) doing
// memory_create, memory_view, memory_search and memory_delete for a fixed
// duration, and prints the server's resident memory (VmRSS from
// /proc/<pid>/status) before, every 10 s during, and for 30 s after the
// load, then after the server's idle-session sweep has run. Clients end
// their session and open a new one every -reconnect operations; with
// -abandon, that share of them vanish without DELETE, as crashed clients
// do, and only the idle sweep ends their sessions. Optionally it first
// posts -big-bodies concurrent bodies of -big-body-mib MiB.
//
// Only loopback is used; the load is bounded by -duration and -max-ops.
//
//	go build -o /tmp/selmem ./cmd/selmem
//	go run ./bench/httpload -bin /tmp/selmem
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "selmem", "selmem binary to run")
	flag.IntVar(&o.clients, "clients", 16, "concurrent MCP clients")
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "load duration")
	flag.Int64Var(&o.maxOps, "max-ops", 1_000_000, "stop after this many tool calls")
	flag.IntVar(&o.reconnect, "reconnect", 40, "tool calls per session before the client opens a new one (0: one session per client)")
	flag.Float64Var(&o.abandon, "abandon", 0.25, "share of ended sessions dropped without DELETE")
	flag.StringVar(&o.protocol, "protocol", "2025-11-25", "MCP protocol version the clients ask for")
	flag.DurationVar(&o.after, "after", 30*time.Second, "how long to watch memory after the load")
	flag.DurationVar(&o.idleTTL, "idle-ttl", 20*time.Second, "SELMEM_HTTP_SESSION_IDLE_TTL of the server (ignored by servers without it)")
	flag.IntVar(&o.bigBodies, "big-bodies", 8, "concurrent oversized POST bodies sent before the load (0: none)")
	flag.IntVar(&o.bigMiB, "big-body-mib", 50, "size of each oversized body in MiB")
	flag.StringVar(&o.logFile, "log", "", "also write the server's log to this file")
	flag.BoolVar(&o.readOnly, "read-only", false, "only memory_view and memory_search (no commits, so the git object cache stays small)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "httpload:", err)
		os.Exit(1)
	}
}

type options struct {
	bin               string
	clients           int
	duration, after   time.Duration
	idleTTL           time.Duration
	maxOps            int64
	reconnect         int
	abandon           float64
	protocol          string
	bigBodies, bigMiB int
	readOnly          bool
	logFile           string
}

var (
	addrRE  = regexp.MustCompile(`msg="serving MCP" transport=http addr=(\S+)`)
	sweptRE = regexp.MustCompile(`msg="ended idle sessions" count=(\d+)`)
)

// server is the running selmem.
type server struct {
	cmd   *exec.Cmd
	url   string
	swept atomic.Int64 // sessions the server logged as ended idle
}

func start(o options) (*server, error) {
	home, err := os.MkdirTemp("", "selmem-httpload-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.bin, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SELMEM_HOME="+home, "SELMEM_LOG_LEVEL=info",
		"SELMEM_HTTP_SESSION_IDLE_TTL="+o.idleTTL.String())
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	var stderr io.Reader = stderrPipe
	if o.logFile != "" {
		f, err := os.Create(o.logFile)
		if err != nil {
			return nil, err
		}
		stderr = io.TeeReader(stderrPipe, f)
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := addrRE.FindStringSubmatch(line); m != nil {
				addr <- m[1]
			}
			if m := sweptRE.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				s.swept.Add(int64(n))
			}
		}
	}()
	select {
	case a := <-addr:
		s.url = "http://" + a + "/mcp"
		return s, nil
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not start", o.bin)
	}
}

// rss is the server's resident set in MiB.
func (s *server) rss() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
			return kb / 1024
		}
	}
	return -1
}

func run(o options) error {
	s, err := start(o)
	if err != nil {
		return err
	}
	defer func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		_ = s.cmd.Wait()
	}()
	t0 := time.Now()
	report := func(phase string, calls int64) {
		fmt.Printf("%-22s t=%5.0fs  rss=%7.1f MiB  calls=%d  swept=%d\n", phase, time.Since(t0).Seconds(), s.rss(), calls, s.swept.Load())
	}
	fmt.Printf("selmem %s: %d clients, %s, protocol %s, reconnect every %d calls, %.0f%% abandoned, idle TTL %s\n",
		o.bin, o.clients, o.duration, o.protocol, o.reconnect, o.abandon*100, o.idleTTL)
	time.Sleep(2 * time.Second)
	report("before", 0)
	if o.bigBodies > 0 {
		bigBodies(s.url, o.bigBodies, int64(o.bigMiB)<<20)
		report(fmt.Sprintf("after %dx%d MiB bodies", o.bigBodies, o.bigMiB), 0)
	}

	var calls, failures atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), o.duration)
	defer cancel()
	var wg sync.WaitGroup
	for i := range o.clients {
		wg.Go(func() { client(ctx, o, s.url, i, &calls, &failures) })
	}
	tick := time.NewTicker(10 * time.Second)
	for done := false; !done; {
		select {
		case <-tick.C:
			report("during", calls.Load())
		case <-ctx.Done():
			done = true
		}
	}
	tick.Stop()
	wg.Wait()
	report("load done", calls.Load())
	for waited := time.Duration(0); waited < o.after; waited += 10 * time.Second {
		time.Sleep(10 * time.Second)
		report("after", calls.Load())
	}
	// The sweep runs every TTL/4: wait one TTL and a half more at most.
	time.Sleep(o.idleTTL / 2)
	report("after idle sweep", calls.Load())
	fmt.Printf("%d tool calls, %d failed, %.0f calls/s\n", calls.Load(), failures.Load(), float64(calls.Load())/o.duration.Seconds())
	return nil
}

// client runs sessions until ctx is done: each create, view, search,
// view, delete of its own note, reconnecting every o.reconnect calls.
func client(ctx context.Context, o options, url string, id int, calls, failures *atomic.Int64) {
	rng := rand.New(rand.NewPCG(uint64(id), 1))
	for n := 0; ctx.Err() == nil; {
		conns := &connTracker{}
		tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: conns.client()}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "httpload", Version: "v0"}, nil).
			Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: o.protocol})
		if err != nil {
			if ctx.Err() == nil {
				failure(failures, "connect", err, nil)
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		for k := 0; (o.reconnect == 0 || k < o.reconnect) && ctx.Err() == nil; {
			if calls.Load() >= o.maxOps {
				break
			}
			n++
			path := fmt.Sprintf("/memories/workspaces/load/notes/c%02d-%d.md", id, n)
			text := fmt.Sprintf("# Note %d of client %d\n\n- Always reconcile the %s ledger before the weekly report.\n", n, id, []string{"revenue", "refund", "invoice", "churn"}[n%4])
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"memory_create", map[string]any{"path": path, "file_text": text}},
				{"memory_view", map[string]any{"path": path}},
				{"memory_search", map[string]any{"query": []string{"weekly report", "refund ledger", "invoice", "reconcile churn"}[rng.IntN(4)]}},
				{"memory_view", map[string]any{"path": "/memories"}},
				{"memory_delete", map[string]any{"path": path}},
			} {
				if o.readOnly && (c.tool == "memory_create" || c.tool == "memory_delete" || c.args["path"] == path) {
					continue
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				if ctx.Err() != nil {
					break
				}
				k++
				calls.Add(1)
				if err != nil || res.IsError {
					failure(failures, c.tool, err, res)
				}
			}
		}
		if rng.Float64() < o.abandon {
			conns.drop() // gone without DELETE
		}
		_ = cs.Close()
		if calls.Load() >= o.maxOps {
			return
		}
	}
}

// failure counts a failed call and prints the first few.
func failure(failures *atomic.Int64, tool string, err error, res *mcp.CallToolResult) {
	if failures.Add(1) > 3 {
		return
	}
	msg := fmt.Sprint(err)
	if err == nil && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			msg = tc.Text
		}
	}
	fmt.Fprintf(os.Stderr, "failed %s: %.200s\n", tool, msg)
}

// connTracker gives one session its own connections, so that the session
// can vanish as a crashed client does: connections cut, no DELETE sent.
type connTracker struct {
	mu    sync.Mutex
	conns []net.Conn
	dead  bool
}

func (c *connTracker) client() *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.dead {
				return nil, fmt.Errorf("session abandoned")
			}
			conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				c.conns = append(c.conns, conn)
			}
			return conn, err
		},
		MaxIdleConnsPerHost: 4,
	}
	return &http.Client{Transport: tr}
}

// drop cuts every connection of the session and refuses new ones.
func (c *connTracker) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dead = true
	for _, conn := range c.conns {
		_ = conn.Close()
	}
}

// bigBodies posts n bodies of size bytes at once, without a session, as
// the attacker did, and waits for the answers.
func bigBodies(url string, n int, size int64) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodPost, url, io.LimitReader(zeros{}, size))
			if err != nil {
				return
			}
			req.ContentLength = size
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// zeros is an endless body of spaces.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}
