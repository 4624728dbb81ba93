package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/selmem/selmem/bench/retrieval/devset"
	"github.com/selmem/selmem/internal/pgtest"
)

// TestPostgres_SameAnswers runs generated sets and the stored natural
// ones through the store over both backends, with the default
// ranking's thesaurus and associated words, and checks that Postgres
// returns the embedded index's top 10 and finds nothing for the same
// nonsense.
func TestPostgres_SameAnswers(t *testing.T) {
	dsn := pgtest.DSN(t)
	mems, err := load(config{seed: 5, conversations: 3, workspaces: 4, nonsense: 40,
		natural: filepath.Join("..", "..", "testdata", "retrieval", "natural")})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mems {
		t.Run(m.name, func(t *testing.T) { sameAnswers(t, dsn, m.set) })
	}
}

// sameAnswers checks that Postgres gives set's queries the embedded
// index's answers.
func sameAnswers(t *testing.T, dsn string, set devset.Set) {
	ctx := context.Background()
	home := t.TempDir()
	dbPath, err := prepare(home, set)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	v, _ := variantByName("default")
	embedded, err := evalVariant(ctx, home, sqliteOpener(dbPath), v, set, log)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := evalPostgres(ctx, home, dsn, v, set, log)
	if err != nil {
		t.Fatal(err)
	}
	// At this size Postgres reads every posting: only ties and the
	// approximate vector index may differ. Without the associated words
	// the overlap is 0.95, without the related words too 0.93.
	if o := overlap(embedded, pg); o < 0.99 {
		t.Errorf("top-10 overlap %.3f over %d queries, want >= 0.99", o, len(set.Queries))
	}
	nonsense, found := 0, 0
	for i, q := range set.Queries {
		if q.Class != "nonsense" {
			continue
		}
		nonsense++
		if a, b := embedded.results[i].hits, pg.results[i].hits; (a == 0) != (b == 0) {
			t.Errorf("nonsense %q: %d hits from the embedded index, %d from Postgres", q.Text, a, b)
		}
		if embedded.results[i].hits > 0 {
			found++
		}
	}
	if found == nonsense {
		t.Error("every nonsense query found something: the floor is off")
	}
}
