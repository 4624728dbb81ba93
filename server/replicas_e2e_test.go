package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/internal/pgtest"
)

// replica is one `selmem serve --http` of a memory shared over a git
// remote; it can be killed and started again on the same home.
type replica struct {
	home string
	env  []string

	mu  sync.Mutex
	srv *httpServer
}

func (r *replica) url() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.srv.url
}

func (r *replica) start(t *testing.T) {
	srv := startHTTP(t, r.home, r.env...)
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
}

// kill ends the replica with SIGKILL, as a crash would.
func (r *replica) kill(t *testing.T) {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = srv.wait(10 * time.Second)
}

// head is the commit the replica's branch names.
func (r *replica) head(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", filepath.Join(r.home, "memory"), "rev-parse", "main").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// toolCall runs a tool for a goroutine that may not fail the test: it
// returns the result text, the commit of a write, isError, and a
// protocol or transport error.
func toolCall(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (text, commit string, isErr bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", "", false, err
	}
	var out struct {
		Commit string `json:"commit"`
	}
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &out)
	}
	return resultText(res), out.Commit, res.IsError, nil
}

// ack is a write a replica acknowledged.
type ack struct {
	path, marker, commit string
	at                   time.Time
}

// replicaSeconds is how long the clients write: 60 s, or
// SELMEM_REPLICA_SECONDS for a quicker run while developing.
func replicaSeconds(t *testing.T) time.Duration {
	if v := os.Getenv("SELMEM_REPLICA_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("SELMEM_REPLICA_SECONDS=%q", v)
		}
		return time.Duration(n) * time.Second
	}
	return 60 * time.Second
}

// TestReplicas_SharedRemoteAndPostgres: three replicas of one memory share
// a bare repository behind a real git server and one Postgres database; 16
// clients spread over them write distinct and overlapping files while one
// replica is killed with SIGKILL and started again. Every acknowledged
// write is in the remote's history, every replica converges to the
// remote's head, a search on any replica finds the acknowledged writes,
// and the shared index is written once per commit, not once per replica.
func TestReplicas_SharedRemoteAndPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("writes for a minute")
	}
	dsn := pgtest.DSN(t)
	remote := gittest.NewServer(t)
	reps := make([]*replica, 3)
	for i := range reps {
		reps[i] = &replica{home: t.TempDir(), env: []string{
			"SELMEM_REMOTE_URL=" + remote.URL, "SELMEM_REMOTE_POLL=1s",
			"SELMEM_INDEX_BACKEND=postgres", "SELMEM_INDEX_DSN=" + dsn,
			"SELMEM_LOG_LEVEL=info",
		}}
		// The first replica creates the memory and pushes it; the others
		// clone it.
		reps[i].start(t)
	}
	// Three files everyone edits, one line per client.
	const clients, shared = 16, 3
	setup := connectHTTP(t, reps[0].url(), "")
	for k := range shared {
		var lines strings.Builder
		fmt.Fprintf(&lines, "# Shared %d\n\n", k)
		for c := range clients {
			fmt.Fprintf(&lines, "slot-%02d: v0\n", c)
		}
		if text, _, isErr := call(t, setup, "memory_create", map[string]any{
			"path": sharedPath(k), "file_text": lines.String()}); isErr {
			t.Fatalf("create shared file: %s", text)
		}
	}
	baseline := remote.Head(t, "main")
	schema := chunkSchema(t, dsn)
	countIndexWrites(t, dsn, schema)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deadline := time.Now().Add(replicaSeconds(t))
	var (
		mu     sync.Mutex
		acks   []ack
		slots  = map[[2]int]int{} // {shared file, client} -> last acknowledged version
		failed = map[string]int{} // error text (first line) -> count
	)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rep := reps[c%len(reps)]
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			var cs *mcp.ClientSession
			version := map[int]int{}
			for n := 0; time.Now().Before(deadline); n++ {
				if cs == nil {
					var err error
					cs, err = newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rep.url(), MaxRetries: -1}, nil)
					if err != nil {
						time.Sleep(200 * time.Millisecond) // the replica is restarting
						continue
					}
				}
				var (
					name string
					args map[string]any
					a    ack
					edit bool // an edit of shared file k
					k    int
					next int
				)
				if rng.IntN(2) == 0 {
					a = ack{path: fmt.Sprintf("/memories/workspaces/team/notes/c%02d-%04d.md", c, n),
						marker: fmt.Sprintf("zqmark%02dx%04d", c, n)}
					name, args = "memory_create", map[string]any{"path": a.path,
						"file_text": fmt.Sprintf("# Note %d of client %d\n\nThe marker is %s.\n", n, c, a.marker)}
				} else {
					k = rng.IntN(shared)
					next = version[k] + 1
					edit = true
					a = ack{path: sharedPath(k), marker: fmt.Sprintf("slot-%02d: v%d", c, next)}
					name, args = "memory_str_replace", map[string]any{"path": a.path,
						"old_str": fmt.Sprintf("slot-%02d: v%d\n", c, version[k]), "new_str": a.marker + "\n"}
				}
				text, commit, isErr, err := toolCall(ctx, cs, name, args)
				switch {
				case err != nil:
					_ = cs.Close()
					cs = nil
					mu.Lock()
					failed["transport: "+firstLine(err.Error())]++
					mu.Unlock()
				case isErr:
					mu.Lock()
					failed[firstLine(text)]++
					mu.Unlock()
					if edit {
						// The line may have moved on in a write whose
						// answer was lost; read where it is.
						version[k] = currentVersion(ctx, cs, a.path, c, version[k])
					}
				default:
					a.commit, a.at = commit, time.Now()
					mu.Lock()
					acks = append(acks, a)
					if edit {
						slots[[2]int{k, c}] = next
					}
					mu.Unlock()
					if edit {
						version[k] = next
					}
				}
			}
			if cs != nil {
				_ = cs.Close()
			}
		})
	}
	// Halfway through, the third replica crashes and comes back.
	time.Sleep(time.Until(deadline) / 2)
	reps[2].kill(t)
	reps[2].start(t)
	wg.Wait()

	final := remote.Head(t, "main")
	history := map[string]bool{}
	for _, h := range strings.Fields(remote.Git(t, "rev-list", "main")) {
		history[h] = true
	}
	landed := len(strings.Fields(remote.Git(t, "rev-list", baseline+".."+final)))
	t.Logf("%d writes acknowledged, %d commits landed on the remote; refused or failed: %v", len(acks), landed, failed)
	if len(acks) < clients {
		t.Fatalf("only %d writes acknowledged", len(acks))
	}
	lost := 0
	for _, a := range acks {
		if !history[a.commit] {
			lost++
			t.Errorf("acknowledged write %s (%s) is not in the remote's history", a.commit, a.path)
		}
	}
	// Each acknowledged note is in the final tree; each shared line is at
	// its last acknowledged version or a later one.
	for _, a := range acks {
		if !strings.Contains(a.path, "/notes/c") {
			continue
		}
		if !strings.Contains(remote.Git(t, "show", final+":"+strings.TrimPrefix(a.path, "/memories/")), a.marker) {
			t.Errorf("%s lacks %s at the remote's head", a.path, a.marker)
		}
	}
	for slot, v := range slots {
		k, c := slot[0], slot[1]
		got := lineVersion(remote.Git(t, "show", final+":"+strings.TrimPrefix(sharedPath(k), "/memories/")), c)
		if got < v {
			t.Errorf("shared file %d, client %d: v%d at the remote's head, v%d was acknowledged", k, c, got, v)
		}
	}
	t.Logf("0 lost: %v", lost == 0)

	// Convergence: every replica reaches the remote's head.
	for i, r := range reps {
		eventually(t, 30*time.Second, fmt.Sprintf("replica %d at %s", i, final[:12]), func() bool { return r.head(t) == final })
	}
	// A search on any replica finds acknowledged writes made on others.
	rng := rand.New(rand.NewPCG(1, 2))
	for i, r := range reps {
		cs := connectHTTP(t, r.url(), "")
		for range 10 {
			a := acks[rng.IntN(len(acks))]
			if !strings.Contains(a.path, "/notes/c") {
				continue
			}
			text, _, isErr := call(t, cs, "memory_search", map[string]any{"query": a.marker, "workspace": "team"})
			if isErr || !strings.Contains(text, strings.TrimPrefix(a.path, "/memories")) {
				t.Errorf("replica %d: search %q did not find %s:\n%s", i, a.marker, a.path, text)
			}
		}
	}
	// The shared index was written once per landed commit, not once per
	// replica: each commit changes one single-chunk file.
	writes := countIndexWrites(t, dsn, schema)
	t.Logf("shared index: %d chunk rows written for %d commits (%.2f per commit)", writes, landed, float64(writes)/float64(max(landed, 1)))
	if writes > int64(landed)*3/2+10 {
		t.Errorf("the shared index wrote %d chunk rows for %d commits: replicas repeat each other's index work", writes, landed)
	}
}

// sharedPath is the k-th file every client edits.
func sharedPath(k int) string { return fmt.Sprintf("/memories/workspaces/team/shared-%d.md", k) }

// lineVersion reads client c's version in a shared file's text; -1 when
// its line is missing.
func lineVersion(text string, c int) int {
	prefix := fmt.Sprintf("slot-%02d: v", c)
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			n, err := strconv.Atoi(v)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// currentVersion reads client c's version in the shared file at p through
// the tools; fallback when it cannot be read.
func currentVersion(ctx context.Context, cs *mcp.ClientSession, p string, c, fallback int) int {
	text, _, isErr, err := toolCall(ctx, cs, "memory_view", map[string]any{"path": p})
	if err != nil || isErr {
		return fallback
	}
	// memory_view numbers its lines: "     3\tslot-00: v2".
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if _, rest, ok := strings.Cut(l, "\t"); ok {
			b.WriteString(rest + "\n")
		}
	}
	if v := lineVersion(b.String(), c); v >= 0 {
		return v
	}
	return fallback
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// chunkSchema is the Postgres schema holding the memory's chunks table.
func chunkSchema(t *testing.T, dsn string) string {
	t.Helper()
	var schemas []string
	queryRows(t, dsn, func(conn *pgx.Conn) error {
		rows, err := conn.Query(context.Background(), `SELECT table_schema FROM information_schema.tables WHERE table_name = 'selmem_chunks'`)
		if err != nil {
			return err
		}
		schemas, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if len(schemas) != 1 {
		t.Fatalf("selmem_chunks in schemas %v, want exactly one (one memory)", schemas)
	}
	return schemas[0]
}

// countIndexWrites returns the rows written to the memory's chunks table
// since the last call: the first call installs a counting trigger.
func countIndexWrites(t *testing.T, dsn, schema string) int64 {
	t.Helper()
	var n int64
	queryRows(t, dsn, func(conn *pgx.Conn) error {
		ctx := context.Background()
		ident := pgx.Identifier{schema}.Sanitize()
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass('selmem_test_writes') IS NOT NULL`).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			for _, stmt := range []string{
				`CREATE TABLE public.selmem_test_writes (n bigint NOT NULL)`,
				`INSERT INTO public.selmem_test_writes VALUES (0)`,
				`CREATE FUNCTION public.selmem_test_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE public.selmem_test_writes SET n = n + 1; RETURN NULL; END $$`,
				`CREATE TRIGGER selmem_test_count AFTER INSERT OR UPDATE ON ` + ident + `.selmem_chunks FOR EACH ROW EXECUTE FUNCTION public.selmem_test_count()`,
			} {
				if _, err := conn.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("%s: %w", stmt, err)
				}
			}
		}
		return conn.QueryRow(ctx, `UPDATE public.selmem_test_writes SET n = 0 RETURNING (SELECT n FROM public.selmem_test_writes)`).Scan(&n)
	})
	return n
}

func queryRows(t *testing.T, dsn string, fn func(*pgx.Conn) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := fn(conn); err != nil {
		t.Fatal(err)
	}
}

// TestReplicas_RemoteUnreachable: while the git server is down, writes
// fail clearly and change nothing, reads and searches go on, /healthz
// reports the lag once it passes health.max_lag, and everything resumes
// when the server is back.
func TestReplicas_RemoteUnreachable(t *testing.T) {
	remote := gittest.NewServer(t)
	home := t.TempDir()
	r := &replica{home: home, env: []string{"SELMEM_REMOTE_URL=" + remote.URL, "SELMEM_REMOTE_POLL=1s", "SELMEM_HEALTH_MAX_LAG=2s"}}
	r.start(t)
	cs := connectHTTP(t, r.url(), "")
	if text, _, isErr := call(t, cs, "memory_create", map[string]any{"path": "/memories/notes/before.md", "file_text": "# Before\n\nwritten while the remote is up: quokka\n"}); isErr {
		t.Fatalf("create: %s", text)
	}
	before := r.head(t)

	remote.SetDown(true)
	text, _, isErr := call(t, cs, "memory_create", map[string]any{"path": "/memories/notes/during.md", "file_text": "# During\n"})
	if !isErr || !strings.Contains(strings.ToLower(text), "remote") {
		t.Fatalf("a write while the remote is down: isError %v, %q; want a clear refusal", isErr, text)
	}
	if got := r.head(t); got != before {
		t.Fatalf("the refused write moved the branch to %s", got)
	}
	if _, err := os.Stat(filepath.Join(home, "memory", "notes", "during.md")); !os.IsNotExist(err) {
		t.Fatalf("the refused write left its file: %v", err)
	}
	if text, _, isErr := call(t, cs, "memory_view", map[string]any{"path": "/memories/notes/before.md"}); isErr || !strings.Contains(text, "quokka") {
		t.Fatalf("read while the remote is down: %s", text)
	}
	if text, _, isErr := call(t, cs, "memory_search", map[string]any{"query": "quokka"}); isErr || !strings.Contains(text, "before.md") {
		t.Fatalf("search while the remote is down: %s", text)
	}
	eventually(t, 30*time.Second, "/healthz to report the remote", func() bool { return health(t, r.url()) == http.StatusServiceUnavailable })

	remote.SetDown(false)
	eventually(t, 30*time.Second, "/healthz to recover", func() bool { return health(t, r.url()) == http.StatusOK })
	if text, _, isErr := call(t, cs, "memory_create", map[string]any{"path": "/memories/notes/after.md", "file_text": "# After\n"}); isErr {
		t.Fatalf("create after the remote came back: %s", text)
	}
	if got, want := remote.Head(t, "main"), r.head(t); got != want {
		t.Fatalf("remote at %s, replica at %s", got, want)
	}
	if log := remote.Git(t, "log", "--format=%s", "main"); slices.Contains(strings.Split(log, "\n"), "during") {
		t.Fatalf("the refused write reached the remote:\n%s", log)
	}
}

// health returns the status code of the replica's /healthz.
func health(t *testing.T, mcpURL string) int {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(mcpURL, "/mcp") + "/healthz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
