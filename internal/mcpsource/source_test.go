package mcpsource

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/profiler"
)

// stdioServer is the fixture as a command server.
func stdioServer(t *testing.T) Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// -test.run=^$: should the fixture variable not reach it, the binary
	// runs no test and fails the handshake instead of recursing.
	return Server{Command: []string{exe, "-test.run=^$"}, Env: []string{fixtureEnv, pidDirEnv, passedEnv}}
}

// fixtureHTTP serves the fixture over streamable HTTP and records the
// Authorization header of each request. A tools/call of "hangup" has its
// connection closed without an answer, as a server that dies would.
type fixtureHTTP struct {
	release chan struct{} // closed when the test ends

	mu    sync.Mutex
	auths []string
	calls int
}

func (f *fixtureHTTP) handler() http.Handler {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newFixture(false, f.release) }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.mu.Lock()
		f.auths = append(f.auths, r.Header.Get("Authorization"))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			f.calls++
		}
		f.mu.Unlock()
		if r.URL.Path != "/" && r.URL.Path != "/redirect" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://169.254.169.254/mcp", http.StatusTemporaryRedirect)
			return
		}
		if bytes.Contains(body, []byte(`"name":"hangup"`)) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
}

func (f *fixtureHTTP) seen() (auths []string, calls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auths...), f.calls
}

// newFixtureHTTP is a fixtureHTTP whose sleeping calls end with the test,
// before its server closes (cleanups run last first).
func newFixtureHTTP(t *testing.T) *fixtureHTTP {
	f := &fixtureHTTP{release: make(chan struct{})}
	t.Cleanup(func() { close(f.release) })
	return f
}

// startHTTP serves a fixtureHTTP on loopback until the test ends.
func startHTTP(t *testing.T) (*fixtureHTTP, *httptest.Server) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	t.Cleanup(ts.Close)
	f := newFixtureHTTP(t)
	ts.Config.Handler = f.handler()
	ts.Start()
	return f, ts
}

// loopback is a policy that allows the test's loopback servers.
func loopback(t *testing.T, creds map[string]egress.Credential, env map[string]string) *egress.Policy {
	t.Helper()
	p, err := egress.New(egress.Config{
		AllowedHosts: []string{"127.0.0.1"},
		Credentials:  creds,
		Key:          "refresh",
		LookupEnv:    func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// table is what a reader read: its column names in order and its rows,
// each a column → value map of the non-null cells.
type table struct {
	cols []string
	rows []map[string]string
}

func readTable(t *testing.T, r profiler.RecordReader) table {
	t.Helper()
	defer r.Release()
	var tb table
	for r.Next() {
		rec := r.RecordBatch()
		tb.cols = tb.cols[:0]
		for _, f := range rec.Schema().Fields() {
			tb.cols = append(tb.cols, f.Name)
		}
		for i := range int(rec.NumRows()) {
			row := map[string]string{}
			for c, name := range tb.cols {
				if col := rec.Column(c).(*array.String); col.IsValid(i) {
					row[name] = col.Value(i)
				}
			}
			tb.rows = append(tb.rows, row)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return tb
}

// readCase is one call of a fixture tool and what must come of it.
type readCase struct {
	name     string
	tool     string
	args     map[string]any
	path     string
	maxBytes int64
	timeout  time.Duration
	wantErr  error             // a kind; nil for success
	wantMsg  string            // part of the error message
	wantRows int               // on success
	wantRow0 map[string]string // on success, the first row's cells
}

// commonCases behave the same over stdio and HTTP.
var commonCases = []readCase{
	{name: "structured content", tool: "structured", args: map[string]any{"region": "north"},
		wantRows: 2, wantRow0: map[string]string{"id": "1", "amount": "1000000", "region.name": "north"}},
	{name: "JSON text content keeps exact numbers", tool: "text",
		wantRows: 2, wantRow0: map[string]string{"id": "9007199254740993", "amount": "12.50"}},
	{name: "records_path", tool: "nested", path: "data.items", wantRows: 2, wantRow0: map[string]string{"a": "1"}},
	{name: "records_path missing key", tool: "nested", path: "data.rows", wantErr: ErrNotRecords, wantMsg: `no key "rows" (its keys: items)`},
	{name: "no records_path on an object without one array", tool: "nested", wantErr: ErrNotRecords, wantMsg: "holding no array"},
	{name: "isError", tool: "fail", wantErr: ErrToolFailed, wantMsg: "quota exceeded"},
	{name: "non-JSON text", tool: "prose", wantErr: ErrNotRecords, wantMsg: `not JSON (it begins "Here are your orders`},
	{name: "not an array", tool: "scalar", wantErr: ErrNotRecords, wantMsg: "no array of records"},
	{name: "an element that is not an object", tool: "mixed", wantErr: ErrNotRecords, wantMsg: "record 1 is a number"},
	{name: "oversize result", tool: "big", args: map[string]any{"n": 50}, maxBytes: 10_000, wantErr: ErrTooLarge, wantMsg: "size limit of 10000 bytes"},
	{name: "oversize on the wire", tool: "big", args: map[string]any{"n": 1200}, maxBytes: 10_000, wantErr: ErrTooLarge},
	{name: "timeout", tool: "sleep", timeout: 300 * time.Millisecond, wantErr: ErrTimeout, wantMsg: "no answer within 300ms"},
	{name: "unknown tool", tool: "nope", wantErr: ErrToolFailed, wantMsg: "refused the call"},
}

// check runs c against src (whose server is set) and checks the outcome,
// and that the error shows none of secrets.
func (c readCase) check(t *testing.T, src Source, secrets ...string) {
	t.Helper()
	src.Tool, src.Arguments, src.RecordsPath, src.MaxBytes, src.Timeout = c.tool, c.args, c.path, c.maxBytes, c.timeout
	src.ServerName = "reports"
	r, err := src.Open(context.Background())
	if c.wantErr != nil {
		if err == nil {
			r.Release()
			t.Fatalf("Open: no error; want %v", c.wantErr)
		}
		if !errors.Is(err, c.wantErr) {
			t.Fatalf("Open: %v; want kind %v", err, c.wantErr)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.wantMsg) || !strings.Contains(msg, `mcp server "reports"`) {
			t.Errorf("Open: %q; want it to name the server and hold %q", msg, c.wantMsg)
		}
		for _, s := range secrets {
			if strings.Contains(msg, s) {
				t.Errorf("Open: %q shows %q", msg, s)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	got := readTable(t, r)
	if len(got.rows) != c.wantRows {
		t.Fatalf("rows = %d; want %d", len(got.rows), c.wantRows)
	}
	for k, v := range c.wantRow0 {
		if got.rows[0][k] != v {
			t.Errorf("row 0 %s = %q; want %q (row %v)", k, got.rows[0][k], v, got.rows[0])
		}
	}
	if info := r.Info(); info.Name != c.tool || info.Format != "mcp-json" {
		t.Errorf("Info = %q, %q; want %q, mcp-json", info.Name, info.Format, c.tool)
	}
}

// alive reports whether fixture process pid exists and is not a zombie (a
// child of a killed fixture is reaped by init, perhaps later).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	// pid (comm) state …: comm may hold spaces and parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X') {
		return false
	}
	// On a busy machine the pid may already belong to another process:
	// only one started with this test's fixture directory is the fixture.
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return !os.IsNotExist(err)
	}
	return strings.Contains(string(env), pidDirEnv+"="+os.Getenv(pidDirEnv))
}

// fixturePIDs are the fixture processes started so far.
func fixturePIDs(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir(os.Getenv(pidDirEnv))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestSource_Stdio(t *testing.T) {
	exe, _ := os.Executable()
	cases := append(append([]readCase(nil), commonCases...),
		readCase{name: "server exits mid-call", tool: "exit", wantErr: ErrExited, wantMsg: "exited (exit status 3)"},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.check(t, Source{Server: stdioServer(t)}, passedVal, hiddenVal, exe)
		})
	}
	t.Run("environment is PATH, HOME and the names passed", func(t *testing.T) {
		r, err := Source{Server: stdioServer(t), Tool: "env"}.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, row := range readTable(t, r).rows {
			got[row["name"]] = true
		}
		for _, name := range []string{"PATH", "HOME", fixtureEnv, pidDirEnv, passedEnv} {
			if !got[name] {
				t.Errorf("%s was not passed (got %v)", name, got)
			}
		}
		delete(got, "PATH")
		delete(got, "HOME")
		delete(got, fixtureEnv)
		delete(got, pidDirEnv)
		delete(got, passedEnv)
		if len(got) > 0 {
			t.Errorf("also passed: %v (%s must never be)", got, hiddenEnv)
		}
	})
	t.Run("a server that never answers is killed with its children", func(t *testing.T) {
		s := stdioServer(t)
		s.Command = append(s.Command, "deaf")
		_, err := Source{Server: s, ServerName: "reports", Tool: "text", Timeout: 300 * time.Millisecond}.Open(context.Background())
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "while starting the session") {
			t.Fatalf("Open: %v; want ErrTimeout while starting the session", err)
		}
	})
	t.Run("a program that does not exist", func(t *testing.T) {
		s := Server{Command: []string{"/nonexistent/dir/mcp-server", "--token", hiddenVal}}
		_, err := Source{Server: s, ServerName: "reports", Tool: "x"}.Open(context.Background())
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `"mcp-server" was not found`) {
			t.Fatalf("Open: %v; want ErrUnavailable naming the program", err)
		}
		if strings.Contains(err.Error(), hiddenVal) || strings.Contains(err.Error(), "/nonexistent") {
			t.Errorf("Open: %q shows the command line", err)
		}
	})
	// Every fixture process has ended: Open waits for it on every path.
	pids := fixturePIDs(t)
	if len(pids) < len(cases) {
		t.Fatalf("%d fixture processes recorded; want at least %d", len(pids), len(cases))
	}
	for _, pid := range pids {
		if aliveAfterKill(pid) {
			t.Errorf("fixture process %d still runs after Open returned", pid)
		}
	}
}

// aliveAfterKill reports whether pid still runs a moment after Open
// returned: SIGKILL sent to a server's children ends them when the
// kernel next schedules them, which on a loaded machine can come after
// Open has reaped the server itself.
func aliveAfterKill(pid int) bool {
	for range 50 {
		if !alive(pid) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

func TestSource_HTTP(t *testing.T) {
	_, ts := startHTTP(t)
	cases := append(append([]readCase(nil), commonCases...),
		readCase{name: "connection closed mid-call", tool: "hangup", wantErr: ErrUnavailable, wantMsg: "failed"},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.check(t, Source{Server: Server{URL: ts.URL}, Policy: loopback(t, nil, nil)})
		})
	}
}

func TestSource_HTTPPolicy(t *testing.T) {
	f, ts := startHTTP(t)
	t.Run("loopback refused by default", func(t *testing.T) {
		for _, p := range []*egress.Policy{nil, egress.Deny()} {
			_, err := Source{Server: Server{URL: ts.URL}, ServerName: "reports", Tool: "text", Policy: p}.Open(context.Background())
			var re *egress.RefusedError
			if !errors.Is(err, ErrUnavailable) || !errors.As(err, &re) {
				t.Fatalf("Open: %v; want a refusal", err)
			}
			if !strings.Contains(err.Error(), "loopback") {
				t.Errorf("Open: %q; want it to say why", err)
			}
		}
		if auths, _ := f.seen(); len(auths) != 0 {
			t.Errorf("the refused server received %d requests", len(auths))
		}
	})
	t.Run("allowed by allowed_hosts", func(t *testing.T) {
		r, err := Source{Server: Server{URL: ts.URL}, Tool: "text", Policy: loopback(t, nil, nil)}.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n := len(readTable(t, r).rows); n != 2 {
			t.Errorf("rows = %d; want 2", n)
		}
	})
}

func TestSource_Credential(t *testing.T) {
	const token = "tok-5c0ffee-credential"
	creds := map[string]egress.Credential{"reports-api": {Env: "REPORTS_TOKEN", Hosts: []string{"127.0.0.1"}, Prefix: "Bearer ", AllowHTTP: true}}
	env := map[string]string{"REPORTS_TOKEN": token}
	f, ts := startHTTP(t)
	src := Source{Server: Server{URL: ts.URL, Credential: "reports-api"}, ServerName: "reports", Policy: loopback(t, creds, env)}

	src.Tool = "text"
	r, err := src.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	auths, _ := f.seen()
	if len(auths) == 0 {
		t.Fatal("no request reached the server")
	}
	for i, a := range auths {
		if a != "Bearer "+token {
			t.Errorf("request %d: Authorization %q; want the credential", i, a)
		}
	}
	// Failures on every path say nothing of the token.
	for _, c := range commonCases {
		if c.wantErr != nil {
			t.Run(c.name, func(t *testing.T) { c.check(t, src, token) })
		}
	}
	t.Run("unconfigured credential", func(t *testing.T) {
		s := src
		s.Server.Credential = "other"
		_, err := s.Open(context.Background())
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `credential "other" is not configured`) {
			t.Fatalf("Open: %v; want the credential named as not configured", err)
		}
	})
}

func TestSource_MTLS(t *testing.T) {
	pki := newPKI(t)
	ts := httptest.NewUnstartedServer(nil)
	t.Cleanup(ts.Close)
	f := newFixtureHTTP(t)
	ts.Config.Handler = f.handler()
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	ts.TLS = pki.serverTLS(t)
	ts.StartTLS()
	policy := loopback(t, nil, nil)
	tests := []struct {
		name    string
		server  Server
		wantErr bool
	}{
		{name: "client certificate", server: Server{URL: ts.URL, CA: pki.caFile, ClientCert: pki.certFile, ClientKey: pki.keyFile}},
		{name: "no client certificate", server: Server{URL: ts.URL, CA: pki.caFile}, wantErr: true},
		{name: "server not trusted", server: Server{URL: ts.URL, ClientCert: pki.certFile, ClientKey: pki.keyFile}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.server.Validate("refresh.mcp_servers.reports"); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			_, before := f.seen()
			r, err := Source{Server: tt.server, ServerName: "reports", Tool: "text", Policy: policy}.Open(context.Background())
			_, after := f.seen()
			if tt.wantErr {
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("Open: %v; want ErrUnavailable", err)
				}
				if after != before {
					t.Errorf("the tool was called without a verified connection")
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if n := len(readTable(t, r).rows); n != 2 {
				t.Errorf("rows = %d; want 2", n)
			}
		})
	}
}

// freePort is a loopback port nothing listens on (it was just released).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}

func TestSource_HTTPFailures(t *testing.T) {
	const key = "key=q-secret-41d7"
	_, ts := startHTTP(t)
	tests := []struct {
		name    string
		url     string
		wantMsg string
		refused bool
	}{
		{name: "nothing listens", url: "http://127.0.0.1:" + freePort(t) + "/mcp?" + key, wantMsg: "the connection to 127.0.0.1"},
		{name: "redirect to a metadata address", url: ts.URL + "/redirect?" + key, wantMsg: "169.254.169.254", refused: true},
		{name: "not an MCP endpoint", url: ts.URL + "/redirect-nowhere?" + key, wantMsg: "HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Source{Server: Server{URL: tt.url}, ServerName: "reports", Tool: "text", Policy: loopback(t, nil, nil)}.Open(context.Background())
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Open: %v; want ErrUnavailable holding %q", err, tt.wantMsg)
			}
			var re *egress.RefusedError
			if got := errors.As(err, &re); got != tt.refused {
				t.Errorf("Open: %v; refused = %v, want %v", err, got, tt.refused)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("Open: %q shows the URL's query", err)
			}
		})
	}
}

// The profiler profiles a tool's records like any source.
func TestSource_Profile(t *testing.T) {
	_, ts := startHTTP(t)
	src := Source{Server: Server{URL: ts.URL}, Name: "orders", Tool: "structured", Arguments: map[string]any{"region": "north"}, Policy: loopback(t, nil, nil)}
	p, err := profiler.Profile(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "orders" || p.Format != "mcp-json" || p.Rows != 2 {
		t.Errorf("profile %q (%s), %d rows; want orders (mcp-json), 2 rows", p.Name, p.Format, p.Rows)
	}
	types := map[string]string{}
	for _, c := range p.Columns {
		types[c.Name] = c.Type
	}
	want := map[string]string{"id": profiler.TypeCode, "amount": profiler.TypeDecimal, "region.name": profiler.TypeCategorical}
	for name, typ := range want {
		if types[name] != typ {
			t.Errorf("column %s: type %q; want %q (all: %v)", name, types[name], typ, types)
		}
	}
}
