package pgindex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/selmem/selmem/internal/pgtest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
)

// hangGuard bounds how long a test waits for something that must happen;
// reaching it fails the test instead of hanging it. It is no timing
// assertion: every wait ends as soon as the awaited event occurs.
const hangGuard = 60 * time.Second

// resetCounter is the pgindex index under test, counting full rebuilds
// (Reset); every other method, MemoryBinder included, is the Lazy's own.
type resetCounter struct {
	*Lazy
	resets *atomic.Int64
}

func (r resetCounter) Reset(ctx context.Context, st memstore.IndexState) error {
	r.resets.Add(1)
	return r.Lazy.Reset(ctx, st)
}

// rebuildLogs is a slog.Handler counting the records that announce a
// rebuild of the index.
type rebuildLogs struct{ n *atomic.Int64 }

func (h rebuildLogs) Enabled(context.Context, slog.Level) bool { return true }

func (h rebuildLogs) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "rebuild") {
		h.n.Add(1)
	}
	return nil
}

func (h rebuildLogs) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h rebuildLogs) WithGroup(string) slog.Handler      { return h }

// schemaCount returns count(*) of query (SQL with %s for the quoted
// schema) in schema.
func schemaCount(tb testing.TB, pool *pgxpool.Pool, schema, query string) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), fmt.Sprintf(query, quoteIdent(schema))).Scan(&n); err != nil {
		tb.Fatalf("%s in %s: %v", query, schema, err)
	}
	return n
}

// TestStore_TwoMemoriesOneDatabase is issue 17's first test: two memories
// (two homes, two stores) configured with the same database, reopened
// every round as successive commands would, writing and searching
// interleaved. Nothing is rebuilt after the first opening, each search
// finds only its own memory's chunks, and a memory's chunks do not change
// when the other writes.
func TestStore_TwoMemoriesOneDatabase(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	emb := embedder.NewBuiltin()
	var resets, rebuildLines atomic.Int64
	log := slog.New(rebuildLogs{&rebuildLines})
	admin := newPool(t, dsn)
	homes := [2]string{t.TempDir(), t.TempDir()}
	var stores [2]*memstore.Store
	var schemas [2]string
	open := func(i int) {
		t.Helper()
		if stores[i] != nil {
			if err := stores[i].Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		pg := Open(newPool(t, dsn), &Options{Dim: emb.Dim(), Logger: log})
		t.Cleanup(func() { pg.Close() })
		s, err := memstore.Open(ctx, homes[i], &memstore.Options{Index: resetCounter{pg, &resets}, Embedder: emb, Logger: log})
		if err != nil {
			t.Fatalf("open memory %d: %v", i, err)
		}
		t.Cleanup(func() { s.Close(ctx) })
		stores[i] = s
		if schemas[i], err = pg.Schema(); err != nil {
			t.Fatal(err)
		}
	}
	var last [2]int // the last round each memory wrote
	write := func(i, round int) {
		t.Helper()
		p := fmt.Sprintf("/memories/workspaces/team/m%d-r%d.md", i, round)
		text := fmt.Sprintf("# Round %d\n\n- Shared runbook rule: page memory%d owner token m%dr%d.\n", round, i, i, round)
		if _, err := stores[i].Create(ctx, p, text, nil); err != nil {
			t.Fatalf("memory %d round %d: %v", i, round, err)
		}
		last[i] = round
	}
	chunks := func(i int) int {
		return schemaCount(t, admin, schemas[i], `SELECT count(*) FROM %s.selmem_chunks`)
	}
	search := func(i int) {
		t.Helper()
		round := last[i]
		for _, q := range []string{"shared runbook rule", fmt.Sprintf("m%dr%d", 1-i, last[1-i])} {
			res, err := stores[i].Search(ctx, memstore.SearchRequest{Query: q, Limit: 50})
			if err != nil || res.Degraded != "" {
				t.Fatalf("memory %d: search %q: %v (degraded %q)", i, q, err, res.Degraded)
			}
			for _, h := range res.Hits {
				if !strings.HasPrefix(h.Path, fmt.Sprintf("/memories/workspaces/team/m%d-", i)) {
					t.Errorf("memory %d: search %q found %s, a chunk of the other memory", i, q, h.Path)
				}
			}
		}
		q := fmt.Sprintf("m%dr%d", i, round)
		res, err := stores[i].Search(ctx, memstore.SearchRequest{Query: q, Limit: 1})
		if want := fmt.Sprintf("/memories/workspaces/team/m%d-r%d.md", i, round); err != nil || len(res.Hits) != 1 || res.Hits[0].Path != want {
			t.Errorf("memory %d: search %q = %+v, %v; want %s", i, q, res.Hits, err, want)
		}
	}

	open(0)
	open(1)
	if schemas[0] == schemas[1] || stores[0].ID() == stores[1].ID() {
		t.Fatalf("two memories share schema %s (ids %s, %s)", schemas[0], stores[0].ID(), stores[1].ID())
	}
	write(0, 0)
	write(1, 0)
	resets.Store(0)
	rebuildLines.Store(0)
	const rounds = 4
	for round := 1; round <= rounds; round++ {
		for i := range 2 {
			other := chunks(1 - i)
			open(i)
			write(i, round)
			if got := chunks(1 - i); got != other {
				t.Errorf("round %d: memory %d's chunks went from %d to %d when memory %d opened and wrote", round, 1-i, other, got, i)
			}
			search(0)
			search(1)
		}
		for i := range 2 {
			files := schemaCount(t, admin, schemas[i], `SELECT count(DISTINCT path) FROM %s.selmem_chunks`)
			if want := round + 1; files != want {
				t.Errorf("round %d: memory %d's index holds %d files, want %d", round, i, files, want)
			}
			head, _ := stores[i].Head()
			st, err := stores[i].Search(ctx, memstore.SearchRequest{Query: "rule", Limit: 1})
			if err != nil || len(st.Hits) == 0 {
				t.Errorf("memory %d: %v", i, err)
			}
			var commit string
			if err := admin.QueryRow(ctx, fmt.Sprintf(`SELECT commit FROM %s.selmem_index_state`, quoteIdent(schemas[i]))).Scan(&commit); err != nil || commit != head {
				t.Errorf("round %d: memory %d's index state names %s (%v), HEAD is %s", round, i, commit, err, head)
			}
		}
	}
	if n := resets.Load(); n != 0 {
		t.Errorf("%d rebuilds after the first opening, want 0", n)
	}
	if n := rebuildLines.Load(); n != 0 {
		t.Errorf("%d log lines announce a rebuild, want 0", n)
	}
	var public bool
	if err := admin.QueryRow(ctx, `SELECT to_regclass('public.selmem_chunks') IS NOT NULL`).Scan(&public); err != nil || public {
		t.Errorf("selmem_chunks in public: %v (%v); every memory should keep to its schema", public, err)
	}
	ns, err := Inspect(ctx, admin, schemas[0])
	if err != nil || !ns.Exists || len(ns.Others) != 1 || ns.Others[0] != schemas[1] || len(ns.Legacy) != 0 {
		t.Errorf("Inspect = %+v, %v; want schema %s existing, the other memory %s, no legacy tables", ns, err, schemas[0], schemas[1])
	}
}

// TestIndex_BindMemoryLegacyTables checks a database used by a version
// before per-memory schemas: binding the index to a memory moves it to the
// memory's schema, where it is built afresh, and leaves the tables in
// public alone; Inspect names them.
func TestIndex_BindMemoryLegacyTables(t *testing.T) {
	t.Parallel()
	ix, pool := newIndex(t, 8)
	ctx := context.Background()
	p := "/memories/notes/old.md"
	if err := ix.Replace(ctx, p, []memstore.Chunk{{Path: p, Text: "legacy chunk", Embedding: randVec(1, 8)}}); err != nil {
		t.Fatal(err)
	}
	if err := ix.SetState(ctx, memstore.IndexState{Commit: "c0ffee", Embedder: "e", Dim: 8}); err != nil {
		t.Fatal(err)
	}
	const id = "0F1E2D3C-4B5A-4968-8776-655443322110"
	if err := ix.BindMemory(id); err != nil {
		t.Fatal(err)
	}
	if got, want := ix.Schema(), "selmem_0f1e2d3c4b5a4968"; got != want {
		t.Fatalf("schema %q, want %q", got, want)
	}
	if st, err := ix.State(ctx); err != nil || st.Commit != "" {
		t.Errorf("state in the new schema %+v, %v; want empty", st, err)
	}
	if got := count(t, pool, "path = $1", p); got != 1 {
		t.Errorf("%d legacy chunks in public, want 1 (left alone)", got)
	}
	if err := ix.BindMemory(id); err != nil {
		t.Errorf("binding the same memory again: %v", err)
	}
	if err := ix.BindMemory("ffffffffffffffff"); !errors.Is(err, memstore.ErrInvalid) {
		t.Errorf("binding another memory: %v, want ErrInvalid", err)
	}
	ns, err := Inspect(ctx, pool, ix.Schema())
	if err != nil || !ns.Exists || !containsAll(ns.Legacy, "selmem_chunks", "selmem_index_state", "selmem_schema_migrations") {
		t.Errorf("Inspect = %+v, %v; want the legacy tables listed", ns, err)
	}
}

func containsAll(have []string, want ...string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

// TestCheckSchema checks which schema names are accepted, and that New
// and BindMemory refuse the others.
func TestCheckSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ok   bool
	}{
		{"selmem_0123456789abcdef", true},
		{"_team", true},
		{"team_a1", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"Team", false},
		{"1team", false},
		{"team-a", false},
		{`team"; DROP SCHEMA public; --`, false},
		{"team a", false},
		{"pg_team", false},
		{"équipe", false},
	}
	for _, tc := range tests {
		if err := CheckSchema(tc.name); (err == nil) != tc.ok {
			t.Errorf("CheckSchema(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	for _, id := range []string{"short", "zzzzzzzzzzzzzzzzzzzz", ""} {
		if s, err := SchemaFor(id); err == nil {
			t.Errorf("SchemaFor(%q) = %q, want an error", id, s)
		}
		if err := Open(nil, &Options{Dim: 8}).BindMemory(id); !errors.Is(err, memstore.ErrInvalid) {
			t.Errorf("Lazy.BindMemory(%q) = %v, want ErrInvalid", id, err)
		}
	}
	if s, err := SchemaFor("da39a3ee5e6b4b0d3255bfef95601890afd80709"); err != nil || s != "selmem_da39a3ee5e6b4b0d" {
		t.Errorf("SchemaFor(a commit hash) = %q, %v", s, err)
	}
	pool := newPool(t, pgtest.DSN(t))
	if _, err := New(pool, &Options{Dim: 8, Schema: "Bad-Name"}); !errors.Is(err, memstore.ErrInvalid) {
		t.Errorf("New with schema Bad-Name: %v, want ErrInvalid", err)
	}
	if err := Open(pool, &Options{Dim: 8, Schema: "x;y"}).BindMemory("0123456789abcdef0123"); !errors.Is(err, memstore.ErrInvalid) {
		t.Errorf("Lazy with schema x;y: BindMemory = %v, want ErrInvalid", err)
	}
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname ILIKE '%bad%'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d schemas made for a refused name (%v)", n, err)
	}
}

// waitWaiting blocks until n sessions of the database wait for an
// advisory lock.
func waitWaiting(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		var got int
		err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions wait for an advisory lock, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIndex_Exclusive checks that Exclusive excludes across two Index
// values on two pools (as two processes would) on the same memory, not
// across memories, and is released after a panic and a cancelled wait.
func TestIndex_Exclusive(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	a, b, other := schemaIndex(t, dsn, "team_x"), schemaIndex(t, dsn, "team_x"), schemaIndex(t, dsn, "team_y")
	admin := newPool(t, dsn)

	entered, release, firstDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		firstDone <- a.Exclusive(ctx, func(context.Context) error {
			close(entered)
			<-release
			return nil
		})
	}()
	<-entered
	// Another memory is not held up.
	if err := other.Exclusive(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("other memory: %v", err)
	}
	secondIn, secondDone := make(chan struct{}), make(chan error, 1)
	go func() {
		secondDone <- b.Exclusive(ctx, func(ctx context.Context) error {
			close(secondIn)
			// fn's own queries run beside the pinned connection.
			_, err := b.State(ctx)
			return err
		})
	}()
	waitWaiting(t, admin, 1)
	select {
	case <-secondIn:
		t.Fatal("the second Exclusive ran while the first held the lock")
	default:
	}
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	if err := <-secondDone; err != nil {
		t.Fatal(err)
	}

	// A panic in fn releases the lock.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the caller")
			}
		}()
		_ = a.Exclusive(ctx, func(context.Context) error { panic("boom") })
	}()
	if err := b.Exclusive(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("after a panic: %v", err)
	}

	// A wait cancelled by its context returns the context's error, and
	// leaves nothing held or waiting.
	entered, release, firstDone = make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		firstDone <- a.Exclusive(ctx, func(context.Context) error {
			close(entered)
			<-release
			return errors.New("fn's own error")
		})
	}()
	<-entered
	cctx, cancel := context.WithCancel(ctx)
	waitErr := make(chan error, 1)
	go func() { waitErr <- b.Exclusive(cctx, func(context.Context) error { return nil }) }()
	waitWaiting(t, admin, 1)
	cancel()
	if err := <-waitErr; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v, want context.Canceled", err)
	}
	waitWaiting(t, admin, 0)
	close(release)
	if err := <-firstDone; err == nil || err.Error() != "fn's own error" {
		t.Errorf("first: %v, want fn's own error", err)
	}
	if err := b.Exclusive(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("after a cancelled wait: %v", err)
	}
}

// listenerPID waits for a session of the database listening on channel
// other than not, and returns its process id.
func listenerPID(t *testing.T, pool *pgxpool.Pool, channel string, not int) int {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		var pid int
		err := pool.QueryRow(context.Background(), `SELECT coalesce(max(pid), 0) FROM pg_stat_activity
			WHERE datname = current_database() AND query = $1 AND pid <> $2`, "LISTEN "+quoteIdent(channel), not).Scan(&pid)
		if err != nil {
			t.Fatal(err)
		}
		if pid != 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session listens on %s", channel)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// receive returns the next commit fn was called with.
func receive(t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case c := <-got:
		return c
	case <-time.After(hangGuard):
		t.Fatal("no notification")
		return ""
	}
}

// TestLazy_PublishSubscribe checks the change feed: Publish on one pool
// reaches Subscribe on another, for the same memory only; after its
// connection is terminated the subscriber listens again, calls fn("") and
// receives later notifications; it returns when its context ends.
func TestLazy_PublishSubscribe(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	const id = "7d444840-9dc0-41d8-a1bb-0e9a1e7a0a64"
	sub := Open(newPool(t, dsn), &Options{Dim: 8})
	if err := sub.BindMemory(id); err != nil {
		t.Fatal(err)
	}
	schema, err := sub.Schema()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := New(newPool(t, dsn), &Options{Dim: 8, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close() })
	other, err := New(newPool(t, dsn), &Options{Dim: 8, Schema: "selmem_ffffffffffffffff"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	admin := newPool(t, dsn)

	sctx, stop := context.WithCancel(ctx)
	got, done := make(chan string, 16), make(chan error, 1)
	go func() { done <- sub.Subscribe(sctx, func(c string) { got <- c }) }()
	pid := listenerPID(t, admin, schema, 0)
	if err := other.Publish(ctx, "other-memory"); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if c := receive(t, got); c != "c1" {
		t.Fatalf("got %q, want c1", c)
	}

	var ok bool
	if err := admin.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate the listener: %v, %v", ok, err)
	}
	if c := receive(t, got); c != "" {
		t.Fatalf("after reconnecting: got %q, want \"\"", c)
	}
	listenerPID(t, admin, schema, pid)
	if err := sub.Publish(ctx, "c2"); err != nil {
		t.Fatal(err)
	}
	if c := receive(t, got); c != "c2" {
		t.Fatalf("after reconnecting: got %q, want c2", c)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe returned %v, want context.Canceled", err)
	}
	select {
	case c := <-got:
		t.Errorf("unexpected notification %q", c)
	default:
	}
}

// TestIndex_SchemaBelongsToOneMemory checks that a schema holding one
// memory's index is refused to another memory (two memories given the
// same index.schema), accepted for replicas of the same memory, and that
// a schema a DBA commented is used as it is.
func TestIndex_SchemaBelongsToOneMemory(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	const one, two = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	bind := func(schema, id string) error {
		ix, err := New(newPool(t, dsn), &Options{Dim: 8, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix.BindMemory(id)
	}
	if err := bind("team_shared", one); err != nil {
		t.Fatalf("first memory: %v", err)
	}
	if err := bind("team_shared", one); err != nil {
		t.Errorf("a replica of the same memory: %v", err)
	}
	err := bind("team_shared", two)
	if !errors.Is(err, memstore.ErrConflict) || !strings.Contains(err.Error(), "give each memory its own index.schema") {
		t.Errorf("another memory: %v, want ErrConflict", err)
	}
	lazy := Open(newPool(t, dsn), &Options{Dim: 8, Schema: "team_shared"})
	t.Cleanup(func() { lazy.Close() })
	if err := lazy.BindMemory(two); err != nil {
		t.Fatalf("Lazy.BindMemory does not connect: %v", err)
	}
	if _, err := lazy.State(ctx); !errors.Is(err, memstore.ErrConflict) {
		t.Errorf("another memory through Lazy: %v, want ErrConflict", err)
	}

	admin := newPool(t, dsn)
	if _, err := admin.Exec(ctx, `CREATE SCHEMA dba_made; COMMENT ON SCHEMA dba_made IS 'analytics team'`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{one, two} {
		if err := bind("dba_made", id); err != nil {
			t.Errorf("a schema the DBA commented, memory %s: %v", id, err)
		}
	}
	var comment string
	if err := admin.QueryRow(ctx, `SELECT obj_description('dba_made'::regnamespace, 'pg_namespace')`).Scan(&comment); err != nil || comment != "analytics team" {
		t.Errorf("the DBA's comment became %q (%v)", comment, err)
	}
}

// TestIndex_MemoriesLockApart checks that the write and schema locks of
// one memory hold up no other memory on the database: with memory x's
// "stats" and "schema" locks held, memory y is written and migrated, and
// memory x's write waits until they are released.
func TestIndex_MemoriesLockApart(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	x, y := schemaIndex(t, dsn, "locks_x"), schemaIndex(t, dsn, "locks_y")
	admin := newPool(t, dsn)
	holder, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(context.Background()) }()
	for _, purpose := range []string{"stats", "schema"} {
		if _, err := holder.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(purpose, "locks_x")); err != nil {
			t.Fatal(err)
		}
	}
	chunk := func(path string) []memstore.Chunk {
		return []memstore.Chunk{{Path: path, Text: "Invoices close on the fifth.", Commit: "c1", Embedding: randVec(1, 8)}}
	}
	if err := y.Replace(ctx, "/memories/notes/y.md", chunk("/memories/notes/y.md")); err != nil {
		t.Fatalf("memory y's write with x's locks held: %v", err)
	}
	if err := y.Migrate(ctx); err != nil {
		t.Fatalf("memory y's migration with x's locks held: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- x.Replace(ctx, "/memories/notes/x.md", chunk("/memories/notes/x.md")) }()
	waitWaiting(t, admin, 1)
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("memory x's write after the locks were released: %v", err)
	}
}

// schemaIndex opens an index of dimension 8 in schema, on a pool of its
// own (as another process would).
func schemaIndex(t *testing.T, dsn, schema string) *Index {
	t.Helper()
	ix, err := New(newPool(t, dsn), &Options{Dim: 8, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}
