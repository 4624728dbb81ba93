package refresh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/gate"
)

const (
	dataV1 = "region,amount,units,day\nEMEA,10.5,3,2026-11-02\nAMER,20,4,2026-11-03\nAPAC,5.25,1,2026-11-04\n"
	// v2: rows shuffled, amounts changed, an extra column.
	dataV2 = "units,region,day,amount,channel\n2,APAC,2026-11-09,6.5,web\n5,EMEA,2026-11-10,11,store\n4,AMER,2026-11-11,23.75,web\n"
	// v3: amount is gone.
	dataV3 = "region,units,day\nEMEA,3,2026-11-16\n"
	// v4: units became text.
	dataV4 = "region,amount,units,day\nEMEA,1,three,2026-11-16\n"
)

func TestRefresh_Lifecycle(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	p := f.writeData(t, "orders.csv", dataV1)
	f.bindFile(t, p)

	res, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash", Trigger: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Outcome, OutcomeRefreshed; got != want {
		t.Fatalf("outcome = %s, want %s", got, want)
	}
	wantCols := []Column{{"region", TypeText}, {"amount", TypeNumber}, {"units", TypeInteger}, {"day", TypeDate}}
	if diff := cmp.Diff(wantCols, res.Binding.Columns); diff != "" {
		t.Fatalf("original columns (-want +got):\n%s", diff)
	}
	b, err := f.r.ReadBinding(t.Context(), "sales", "dash")
	if err != nil {
		t.Fatal(err)
	}
	if b.Snapshot == nil || b.Snapshot.Rows != 3 || b.Snapshot.Source != "file:orders.csv" {
		t.Fatalf("binding snapshot = %+v", b.Snapshot)
	}
	if _, _, err := f.store.Read(ctx, "/memories/workspaces/sales/schemas/orders.md"); err != nil {
		t.Fatalf("profile not stored: %v", err)
	}
	snap1 := b.Snapshot.SHA256

	// The same data again: nothing to commit.
	h := head(t, f.store)
	res, err = f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
	if err != nil || res.Outcome != OutcomeUnchanged || head(t, f.store) != h {
		t.Fatalf("refresh of unchanged data = %v, %v; head moved: %v", res.Outcome, err, head(t, f.store) != h)
	}

	// v2 fits: an added column, rows shuffled.
	f.writeData(t, "orders.csv", dataV2)
	res, err = f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"channel"}, res.ColumnsAdded); diff != "" {
		t.Errorf("columns added (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantCols, res.Binding.Columns); diff != "" {
		t.Errorf("the original columns changed (-want +got):\n%s", diff)
	}
	if res.PreviousSHA256 != snap1 || res.Binding.Snapshot.SHA256 == snap1 {
		t.Errorf("snapshot did not move: %s -> %s", res.PreviousSHA256, res.Binding.Snapshot.SHA256)
	}
	data, err := f.r.Snapshots().Get(res.Binding.Snapshot.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Records []map[string]any `json:"records"`
		Rows    int              `json:"rows"`
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		t.Fatal(err)
	}
	if got, want := snap.Records[2]["amount"], 23.75; got != want {
		t.Errorf("records[2].amount = %v, want %v", got, want)
	}

	// v3 and v4 break the artifact: nothing changes.
	for _, tc := range []struct {
		name, data string
		missing    []string
		changed    []TypeChange
	}{
		{"missing column", dataV3, []string{"amount"}, nil},
		{"text where integer", dataV4, nil, []TypeChange{{"units", TypeInteger, TypeText}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b0, _, _ := f.store.Read(ctx, BindingPath("sales", "dash"))
			h := head(t, f.store)
			f.writeData(t, "orders.csv", tc.data)
			_, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
			var inc *IncompatibleError
			if !errors.As(err, &inc) || !errors.Is(err, memstore.ErrConflict) {
				t.Fatalf("err = %v, want an IncompatibleError", err)
			}
			if diff := cmp.Diff(tc.missing, inc.Break.Missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.changed, inc.Break.Changed); diff != "" {
				t.Errorf("type changes (-want +got):\n%s", diff)
			}
			if !strings.Contains(err.Error(), "regenerate") {
				t.Errorf("the message does not say to regenerate: %s", err)
			}
			b1, _, _ := f.store.Read(ctx, BindingPath("sales", "dash"))
			if head(t, f.store) != h || string(b0) != string(b1) {
				t.Error("an incompatible refresh changed the memory")
			}
			st, ok := f.r.Snapshots().LastStatus("sales", "dash")
			if !ok || st.Outcome != OutcomeIncompatible || st.Break == nil {
				t.Errorf("status = %+v", st)
			}
		})
	}
}

func TestRefresh_Retention(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil) // keeps 3
	p := f.writeData(t, "orders.csv", dataV1)
	f.bindFile(t, p)
	var shas []string
	for i := range 5 {
		f.writeData(t, "orders.csv", dataV1+"EMEA,"+strings.Repeat("1", i+1)+",1,2026-11-05\n")
		res, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, res.Binding.Snapshot.SHA256)
	}
	for i, sha := range shas {
		_, err := f.r.Snapshots().Get(sha)
		if kept := i >= 2; kept != (err == nil) {
			t.Errorf("snapshot %d: kept = %v, err = %v", i, kept, err)
		}
		if err != nil && !strings.Contains(err.Error(), "no longer retained") {
			t.Errorf("snapshot %d: error does not say it is no longer retained: %v", i, err)
		}
	}
}

func TestRefresh_FailedCommitLeavesNoSnapshot(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	p := f.writeData(t, "orders.csv", dataV1)
	f.bindFile(t, p)
	// A schema name whose profile would be refused is caught before the
	// commit; make the commit itself fail by closing the store.
	f.store.Close(ctx)
	_, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
	if err == nil {
		t.Fatal("refresh on a closed store succeeded")
	}
	entries, _ := os.ReadDir(f.r.Snapshots().dir + "/objects")
	for _, e := range entries {
		sub, _ := os.ReadDir(f.r.Snapshots().dir + "/objects/" + e.Name())
		if len(sub) > 0 {
			t.Errorf("a failed refresh left snapshot %s", sub[0].Name())
		}
	}
}

// TestRefresh_Lint refreshes an artifact whose program hardcodes a total
// and a region: the findings come with the refresh, and again (from the
// last run) while the program is unchanged.
func TestRefresh_Lint(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	p := f.writeData(t, "orders.csv", dataV1)
	f.bindFile(t, p)
	f.put(t, map[string]string{ArtifactDir("sales", "dash") + "/app.js": "document.title = 'EMEA leads';\nvar total = 35.75;\n"})
	for i := range 2 {
		if i == 1 {
			f.writeData(t, "orders.csv", strings.Replace(dataV1, "20,4", "20,5", 1))
		}
		res, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(res.Lint, "\n")
		if !strings.Contains(got, "app.js:1") || !strings.Contains(got, "app.js:2") {
			t.Errorf("run %d: lint = %q, want the region on line 1 and the total on line 2", i, got)
		}
	}
}

// TestRefresh_RefusedCommitKeepsTheBoundSnapshot refreshes with data whose
// profile the store refuses (the workspace would exceed its size cap): the
// refresh fails, the new snapshot is gone, and the artifact still shows the
// snapshot it is bound to, retained even when only one is kept.
func TestRefresh_RefusedCommitKeepsTheBoundSnapshot(t *testing.T) {
	ctx := context.Background()
	f := newFixtureWith(t, gate.Limits{MaxFileBytes: 1024, MaxWorkspaceBytes: 1700, MaxDepth: gate.DefaultMaxDepth, MaxNameBytes: gate.DefaultMaxNameBytes}, 1, nil)
	store, snaps := f.store, f.r.Snapshots()
	f.bindFile(t, f.writeData(t, "orders.csv", dataV1))
	if _, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"}); err != nil {
		t.Fatal(err)
	}
	bound, err := f.r.ReadBinding(ctx, "sales", "dash")
	if err != nil {
		t.Fatal(err)
	}
	h := head(t, store)

	var big strings.Builder
	big.WriteString("region,amount,units,day\n")
	for i := range 300 {
		fmt.Fprintf(&big, "%s,%d.5,%d,2026-11-%02d\n", strings.Repeat(fmt.Sprintf("Region number %d of a long list ", i), 3), i, i%9, 1+i%28)
	}
	f.writeData(t, "orders.csv", big.String())
	if _, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"}); err == nil || !strings.Contains(err.Error(), "workspace") {
		t.Fatalf("a refresh whose commit the store refuses: %v", err)
	}
	if head(t, store) != h {
		t.Error("the refused refresh moved the branch")
	}
	objects, _ := filepath.Glob(filepath.Join(snaps.dir, "objects", "*", "*.json"))
	if len(objects) != 1 || filepath.Base(objects[0]) != bound.Snapshot.SHA256+".json" {
		t.Errorf("snapshots left: %v; want only the bound %s", objects, bound.Snapshot.SHA256)
	}
	if refs := snaps.readRefs(snaps.refsFile("sales", "dash")); !slices.Equal(refs, []string{bound.Snapshot.SHA256}) {
		t.Errorf("retained %v; want the bound snapshot only", refs)
	}
	v, err := f.r.View(ctx, "sales", "dash")
	if err != nil {
		t.Fatal(err)
	}
	if shown, err := v.Injected(); err != nil || !strings.Contains(string(shown), `"region":"EMEA"`) {
		t.Errorf("the view after the refused refresh: %.200s, %v", shown, err)
	}
	if st, ok := snaps.LastStatus("sales", "dash"); !ok || st.Outcome != OutcomeFailed {
		t.Errorf("last status %+v", st)
	}
}

// TestSnapshots_RetainHoldsTheBoundSnapshot keeps one snapshot per
// artifact: retaining a new one keeps the one still bound (hold) until the
// next, and releasing a new one after a failed commit forgets and deletes
// it.
func TestSnapshots_RetainHoldsTheBoundSnapshot(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSnapshots(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	put := func(data string) string {
		t.Helper()
		sha, err := s.Put([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	a, b, c := put(`{"v":"a"}`), put(`{"v":"b"}`), put(`{"v":"c"}`)
	stored := func(sha string) bool { _, err := s.Get(sha); return err == nil }
	check := func(step string, want []string, gone ...string) {
		t.Helper()
		if got := s.readRefs(s.refsFile("ws", "dash")); !slices.Equal(got, want) {
			t.Errorf("%s: retained %v, want %v", step, got, want)
		}
		for _, sha := range want {
			if !stored(sha) {
				t.Errorf("%s: retained snapshot %s is gone", step, sha[:8])
			}
		}
		for _, sha := range gone {
			if stored(sha) {
				t.Errorf("%s: snapshot %s is still stored", step, sha[:8])
			}
		}
	}
	for _, step := range []struct {
		name      string
		do        func() bool // reports whether Retain added
		wantAdded bool
		want      []string
		gone      []string
	}{
		{"first", func() bool { added, _ := s.Retain(ctx, "ws", "dash", a, ""); return added }, true, []string{a}, nil},
		{"next, a still bound", func() bool { added, _ := s.Retain(ctx, "ws", "dash", b, a); return added }, true, []string{a, b}, nil},
		{"the commit failed", func() bool { s.Release(ctx, "ws", "dash", b); return false }, false, []string{a}, []string{b}},
		{"a again", func() bool { added, _ := s.Retain(ctx, "ws", "dash", a, a); return added }, false, []string{a}, []string{b}},
		{"c, a bound", func() bool { added, _ := s.Retain(ctx, "ws", "dash", c, a); return added }, true, []string{a, c}, nil},
		{"a, c bound", func() bool { added, _ := s.Retain(ctx, "ws", "dash", a, c); return added }, false, []string{c, a}, nil},
		{"c again, nothing held", func() bool { added, _ := s.Retain(ctx, "ws", "dash", c, ""); return added }, false, []string{c}, []string{a}},
	} {
		if added := step.do(); added != step.wantAdded {
			t.Errorf("%s: added %v, want %v", step.name, added, step.wantAdded)
		}
		check(step.name, step.want, step.gone...)
	}
}

// TestSnapshots_RetainVanished: a snapshot deleted between its Put and
// its Retain (another artifact's failed refresh of the same data discarded
// it) is not recorded as retained; stored again, it is.
func TestSnapshots_RetainVanished(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSnapshots(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"v":"shared"}`)
	sha, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	s.Discard(ctx, sha) // the other artifact's refresh failed
	if _, err := s.Retain(ctx, "ws", "dash", sha, ""); !errors.Is(err, errVanished) {
		t.Fatalf("Retain of a deleted snapshot: %v, want errVanished", err)
	}
	if refs := s.readRefs(s.refsFile("ws", "dash")); len(refs) != 0 {
		t.Fatalf("a deleted snapshot was recorded as retained: %v", refs)
	}
	if _, err := s.Put(data); err != nil {
		t.Fatal(err)
	}
	if added, err := s.Retain(ctx, "ws", "dash", sha, ""); err != nil || !added {
		t.Fatalf("Retain after storing it again: added %v, %v", added, err)
	}
	if _, err := s.Bound("ws", "dash", sha); err != nil {
		t.Errorf("the retained snapshot: %v", err)
	}
}
