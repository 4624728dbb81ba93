package refresh

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
)

// TestRefresh_LoadedTemplateSwap is the template "swap": a workspace is
// published, loaded into a new workspace whose artifact then has no data,
// pointed at the caller's own file and refreshed; the compatibility check
// accepts data with the template's columns and refuses data without them.
func TestRefresh_LoadedTemplateSwap(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	f.bindFile(t, f.writeData(t, "orders.csv", dataV1))
	if _, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.PublishTemplate(ctx, "sales", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	wantCols := []Column{{"region", TypeText}, {"amount", TypeNumber}, {"units", TypeInteger}, {"day", TypeDate}}

	tests := []struct {
		name    string
		data    string
		wantErr bool
	}{
		// Other rows, the columns in another order, one column more.
		{"compatible", dataV2, false},
		{"amount missing", dataV3, true},
		{"units became text", dataV4, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := []string{"mine", "mine2", "mine3"}[i]
			if _, err := f.store.LoadTemplate(ctx, "sales@1.0.0", ws); err != nil {
				t.Fatal(err)
			}
			b, err := f.r.ReadBinding(ctx, ws, "dash")
			if err != nil {
				t.Fatal(err)
			}
			if b.Snapshot != nil {
				t.Fatalf("a loaded artifact has data before it is refreshed: %+v", b.Snapshot)
			}
			if diff := cmp.Diff(wantCols, b.Columns); diff != "" {
				t.Fatalf("the template's columns (-want +got):\n%s", diff)
			}
			// The caller points the connector at their own data.
			own := f.writeData(t, ws+".csv", tt.data)
			f.put(t, map[string]string{ConnectorPath(ws, "orders"): "kind: file\npath: " + own + "\n"})
			before := head(t, f.store)

			res, err := f.r.Refresh(ctx, Request{Workspace: ws, Artifact: "dash", Trigger: "test"})
			if tt.wantErr {
				var inc *IncompatibleError
				if !errors.As(err, &inc) || !errors.Is(err, memstore.ErrConflict) {
					t.Fatalf("refresh = %v, want an IncompatibleError", err)
				}
				if head(t, f.store) != before {
					t.Fatal("a refused refresh committed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != OutcomeRefreshed || res.Binding.Snapshot == nil || res.Binding.Snapshot.Source != "file:"+ws+".csv" {
				t.Fatalf("refresh = %+v", res)
			}
			if diff := cmp.Diff([]string{"channel"}, res.ColumnsAdded); diff != "" {
				t.Errorf("columns added (-want +got):\n%s", diff)
			}
			// The template's workspace still shows its own data.
			orig, err := f.r.ReadBinding(ctx, "sales", "dash")
			if err != nil || orig.Snapshot == nil || orig.Snapshot.SHA256 == res.Binding.Snapshot.SHA256 {
				t.Fatalf("the template's workspace changed: %+v, %v", orig, err)
			}
		})
	}
}
