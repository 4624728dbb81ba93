package refresh

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/schemas"
)

// fixture is a memory with a workspace "sales", a data root, and a
// refresher over both.
type fixture struct {
	home  string
	data  string // the data root
	store *memstore.Store
	r     *Refresher
}

func newFixture(t *testing.T, opts *Options) *fixture {
	t.Helper()
	return newFixtureWith(t, gate.Limits{}, 3, opts)
}

// newFixtureWith is newFixture with the store's limits (zero: the
// defaults) and the snapshots kept per artifact.
func newFixtureWith(t *testing.T, limits gate.Limits, keep int, opts *Options) *fixture {
	t.Helper()
	home := t.TempDir()
	data := t.TempDir()
	store, err := memstore.Open(context.Background(), home, &memstore.Options{Durability: memstore.DurabilityOS, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	snaps, err := OpenSnapshots(filepath.Join(home, "data"), keep)
	if err != nil {
		t.Fatal(err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Access = schemas.Access{Roots: []string{data}}
	return &fixture{home: home, data: data, store: store, r: New(store, snaps, &o)}
}

// put writes memory files in one commit.
func (f *fixture) put(t *testing.T, files map[string]string) {
	t.Helper()
	if _, err := f.store.Put(context.Background(), files, nil); err != nil {
		t.Fatal(err)
	}
}

// writeData writes a file in the data root and returns its path.
func (f *fixture) writeData(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(f.data, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// bindFile binds artifact "dash" of workspace "sales" to a file
// connector "orders" reading path.
func (f *fixture) bindFile(t *testing.T, path string) {
	t.Helper()
	f.put(t, map[string]string{
		ConnectorPath("sales", "orders"):             "kind: file\npath: " + path + "\n",
		BindingPath("sales", "dash"):                 "connector: orders\n",
		ArtifactDir("sales", "dash") + "/index.html": "<!doctype html><script type=\"application/json\" id=\"selmem-data\"></script>\n",
	})
}

func head(t *testing.T, s *memstore.Store) string {
	t.Helper()
	h, err := s.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

var update = flag.Bool("update", false, "rewrite golden files")

// newTextLogger logs every level as text to w.
func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
