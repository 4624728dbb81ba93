package refresh

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/gate"
)

// snapshotReaders are the ways an artifact's data is read, each giving its
// answer as text: the data, or the error.
var snapshotReaders = []struct {
	name string
	read func(ctx context.Context, r *Refresher, ws, artifact string) string
}{
	{"view", func(ctx context.Context, r *Refresher, ws, artifact string) string {
		v, err := r.View(ctx, ws, artifact)
		if err != nil {
			return "error: " + err.Error()
		}
		data, err := v.Injected()
		if err != nil {
			return "error: " + err.Error()
		}
		return "data: " + string(data)
	}},
	{"view by column", func(ctx context.Context, r *Refresher, ws, artifact string) string {
		v, err := r.View(ctx, ws, artifact)
		if err != nil {
			return "error: " + err.Error()
		}
		c, ok, err := v.Columnar()
		if err != nil || !ok {
			return fmt.Sprintf("error: %v (data: %v)", err, ok)
		}
		return "data: " + string(c.Data)
	}},
	{"query", func(ctx context.Context, r *Refresher, ws, artifact string) string {
		res, err := r.Query(ctx, ws, artifact, "SELECT region, amount FROM data ORDER BY region", QueryLimits{})
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprint("data: ", res.Rows)
	}},
	{"served data.json", func(ctx context.Context, r *Refresher, ws, artifact string) string {
		code, body, _ := r.serve(ctx, ws, artifact, DataFile)
		return fmt.Sprintf("%d %s", code, body)
	}},
	{"served index.html", func(ctx context.Context, r *Refresher, ws, artifact string) string {
		code, body, _ := r.serve(ctx, ws, artifact, "index.html")
		return fmt.Sprintf("%d %s", code, body)
	}},
	{"lint", func(ctx context.Context, r *Refresher, ws, artifact string) string {
		b, err := r.ReadBinding(ctx, ws, artifact)
		if err != nil {
			return "error: " + err.Error()
		}
		files, _, err := r.Program(ctx, ws, artifact)
		if err != nil {
			return "error: " + err.Error()
		}
		findings, err := r.LintBound(ws, artifact, files, b.Snapshot.SHA256)
		if err != nil {
			return "error: " + err.Error()
		}
		return "findings: " + strings.Join(findings, "; ")
	}},
}

// TestRefresher_OtherArtifactsSnapshot binds an artifact of workspace ops
// to the snapshot of workspace sales's artifact (its binding is written in
// git, where whoever may write ops can name any hash): every reader of
// ops's data answers exactly as it does once that snapshot is gone, and
// shows none of sales's data, though this process holds it by column.
func TestRefresher_OtherArtifactsSnapshot(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	f.bindFile(t, f.writeData(t, "orders.csv", dataV1))
	res, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
	if err != nil {
		t.Fatal(err)
	}
	theirs := *res.Binding
	f.put(t, map[string]string{
		ConnectorPath("ops", "own"):                  "kind: file\npath: " + f.writeData(t, "own.csv", dataV2) + "\n",
		BindingPath("ops", "board"):                  (&Binding{Connector: "own", Columns: theirs.Columns, Snapshot: theirs.Snapshot}).Marshal(),
		ArtifactDir("ops", "board") + "/index.html":  "<!doctype html>" + InjectionPoint + "\n",
		ArtifactDir("ops", "board") + "/guesses.js":  "var guess = 'EMEA';\n",
		ArtifactDir("sales", "dash") + "/guesses.js": "var guess = 'EMEA';\n",
	})

	// sales's own readers are served its data.
	for _, rd := range snapshotReaders {
		if got := rd.read(ctx, f.r, "sales", "dash"); !strings.Contains(got, "EMEA") || strings.Contains(got, "error") {
			t.Errorf("%s of sales/dash: %.300s", rd.name, got)
		}
	}
	elsewhere := map[string]string{}
	for _, rd := range snapshotReaders {
		elsewhere[rd.name] = rd.read(ctx, f.r, "ops", "board")
	}
	// The snapshot goes: what ops's readers answer then is what they must
	// have answered while it was sales's.
	f.r.Snapshots().Release(ctx, "sales", "dash", theirs.Snapshot.SHA256)
	if _, err := f.r.Snapshots().Get(theirs.Snapshot.SHA256); !errors.Is(err, memstore.ErrNotFound) {
		t.Fatalf("the released snapshot is still stored: %v", err)
	}
	for _, rd := range snapshotReaders {
		t.Run(rd.name, func(t *testing.T) {
			got, gone := elsewhere[rd.name], rd.read(ctx, f.r, "ops", "board")
			if strings.Contains(got, "EMEA") {
				t.Errorf("ops/board shows sales's data: %.300s", got)
			}
			if !strings.Contains(gone, "no longer retained") {
				t.Errorf("once the snapshot is gone: %.300s", gone)
			}
			if got != gone {
				t.Errorf("another artifact's snapshot and a snapshot that is gone are told apart:\n  elsewhere: %.300s\n  gone:      %.300s", got, gone)
			}
		})
	}
}

// TestRefresher_BoundSnapshotServed: the data an artifact is bound to is
// served right after a refresh, while a new snapshot is being committed
// (the previous one held), after the binding is reverted to a snapshot
// still kept, and, for an artifact copied with its binding, once a
// refresh found its data unchanged.
func TestRefresher_BoundSnapshotServed(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		keep int
		// setup leaves sales/dash (or the artifact it names) bound to
		// data with the region EMEA.
		setup func(t *testing.T, f *fixture) (artifact string)
	}{
		{"right after a refresh", 1, func(t *testing.T, f *fixture) string {
			refresh(t, f, "dash")
			return "dash"
		}},
		{"the previous snapshot while a new one commits", 1, func(t *testing.T, f *fixture) string {
			old := refresh(t, f, "dash")
			next, err := f.r.Snapshots().Put([]byte(`{"columns":[],"records":[],"rows":0}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.r.Snapshots().Retain(ctx, "sales", "dash", next, old); err != nil {
				t.Fatal(err)
			}
			return "dash"
		}},
		{"a reverted binding", 3, func(t *testing.T, f *fixture) string {
			b := refresh(t, f, "dash")
			f.writeData(t, "orders.csv", strings.Replace(dataV1, "EMEA", "NORTH", 1))
			refresh(t, f, "dash")
			bound, err := f.r.ReadBinding(ctx, "sales", "dash")
			if err != nil {
				t.Fatal(err)
			}
			bound.Snapshot.SHA256 = b
			f.put(t, map[string]string{BindingPath("sales", "dash"): bound.Marshal()})
			return "dash"
		}},
		{"a copy refreshed with the same data", 3, func(t *testing.T, f *fixture) string {
			refresh(t, f, "dash")
			for _, name := range []string{BindingName, "index.html", "guesses.js"} {
				content, _, err := f.store.Read(ctx, ArtifactDir("sales", "dash")+"/"+name)
				if err != nil {
					t.Fatal(err)
				}
				f.put(t, map[string]string{ArtifactDir("sales", "copy") + "/" + name: string(content)})
			}
			if res, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "copy"}); err != nil || res.Outcome != OutcomeUnchanged {
				t.Fatalf("refresh of the copy: %v, %v", res.Outcome, err)
			}
			return "copy"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureWith(t, gate.Limits{}, tc.keep, nil)
			f.bindFile(t, f.writeData(t, "orders.csv", dataV1))
			f.put(t, map[string]string{ArtifactDir("sales", "dash") + "/guesses.js": "var guess = 'EMEA';\n"})
			artifact := tc.setup(t, f)
			// This process holds the data by column; another reads the
			// snapshot.
			for i, r := range []*Refresher{f.r, New(f.store, f.r.snaps, &f.r.opts)} {
				for _, rd := range snapshotReaders {
					if got := rd.read(ctx, r, "sales", artifact); !strings.Contains(got, "EMEA") || strings.Contains(got, "error") {
						t.Errorf("%s (refresher %d): %.300s", rd.name, i, got)
					}
				}
			}
		})
	}
}

// refresh refreshes sales/<artifact> and returns the snapshot it is bound
// to.
func refresh(t *testing.T, f *fixture, artifact string) string {
	t.Helper()
	res, err := f.r.Refresh(context.Background(), Request{Workspace: "sales", Artifact: artifact})
	if err != nil {
		t.Fatal(err)
	}
	return res.Binding.Snapshot.SHA256
}

// TestRefresh_RefusedLeavesNothing refreshes as principals the workspace
// does not let write the artifact, and artifacts that do not exist: each
// is refused before it starts, and leaves the snapshot store (status,
// locks, refs, objects) and the memory as they were, and no run recorded.
func TestRefresh_RefusedLeavesNothing(t *testing.T) {
	ctx := context.Background()
	var recorded []Status
	f := newFixture(t, &Options{Recorded: func(st Status) { recorded = append(recorded, st) }})
	f.bindFile(t, f.writeData(t, "orders.csv", dataV1))
	f.put(t, map[string]string{
		memstore.Root + "/workspaces/sales/" + access.WorkspaceFile: "acl:\n  owners: [olive]\n  stewards: [steve]\n  viewers: [vera]\n",
	})
	person := func(name string) context.Context {
		return access.WithPrincipal(ctx, access.Principal{User: name, Kind: access.KindPerson})
	}
	tests := []struct {
		name    string
		ctx     context.Context
		req     Request
		wantErr error
	}{
		{"no role", person("mallory"), Request{Workspace: "sales", Artifact: "dash"}, memstore.ErrDenied},
		{"a viewer", person("vera"), Request{Workspace: "sales", Artifact: "dash"}, memstore.ErrDenied},
		{"a service without a role", access.WithPrincipal(ctx, access.Principal{User: "bot", Kind: access.KindService}), Request{Workspace: "sales", Artifact: "dash"}, memstore.ErrDenied},
		{"a viewer naming another source", person("vera"), Request{Workspace: "sales", Artifact: "dash", Source: "orders", Rebind: true}, memstore.ErrDenied},
		{"a workspace that does not exist", person("mallory"), Request{Workspace: "ghost", Artifact: "dash"}, memstore.ErrDenied},
		{"a workspace that does not exist, locally", ctx, Request{Workspace: "ghost", Artifact: "dash"}, memstore.ErrNotFound},
		{"an artifact that does not exist", person("steve"), Request{Workspace: "sales", Artifact: "nope"}, memstore.ErrNotFound},
		{"a source that is not a name", person("steve"), Request{Workspace: "sales", Artifact: "dash", Source: "../x"}, memstore.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, h := storeTree(t, f.r.snaps.dir), head(t, f.store)
			recorded = nil
			_, err := f.r.Refresh(tc.ctx, tc.req)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(before, storeTree(t, f.r.snaps.dir)); diff != "" {
				t.Errorf("the refused refresh changed the snapshot store (-before +after):\n%s", diff)
			}
			if head(t, f.store) != h {
				t.Error("the refused refresh moved the branch")
			}
			if len(recorded) > 0 {
				t.Errorf("the refused refresh was recorded: %+v", recorded)
			}
		})
	}

	// A steward refreshes.
	if _, err := f.r.Refresh(person("steve"), Request{Workspace: "sales", Artifact: "dash"}); err != nil {
		t.Fatalf("a steward's refresh: %v", err)
	}
	if st, ok := f.r.Snapshots().LastStatus("sales", "dash"); !ok || st.Outcome != OutcomeRefreshed || len(recorded) != 1 {
		t.Errorf("a steward's refresh: status %+v, %d recorded", st, len(recorded))
	}
}

// storeTree lists every directory and file under dir, with the files'
// contents.
func storeTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			tree[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		tree[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}
