package refresh

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
)

func TestInline(t *testing.T) {
	files := map[string]string{
		"app.js":       "var a = '</script>';\n",
		"style.css":    "body{color:red}\n",
		"lib/chart.js": "chart()\n",
		BindingName:    "connector: x\n",
	}
	tests := []struct {
		name, in, want string
	}{
		{"script", `<script src="app.js"></script>`, "<script>var a = '<\\/script>';\n</script>"},
		{"script in a directory", `<script src='lib/chart.js'> </script>`, "<script>chart()\n</script>"},
		{"style sheet", `<link rel="stylesheet" href="style.css">`, "<style>body{color:red}\n</style>"},
		{"other link", `<link rel="icon" href="style.css">`, `<link rel="icon" href="style.css">`},
		{"other origin", `<script src="https://cdn.example/x.js"></script>`, `<script src="https://cdn.example/x.js"></script>`},
		{"absolute path", `<script src="/app.js"></script>`, `<script src="/app.js"></script>`},
		{"missing file", `<script src="nope.js"></script>`, `<script src="nope.js"></script>`},
		{"the binding", `<script src="binding.yaml"></script>`, `<script src="binding.yaml"></script>`},
		{"outside the artifact", `<script src="../other/app.js"></script>`, `<script src="../other/app.js"></script>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := inline(tt.in, files); got != tt.want {
				t.Errorf("inline(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRefresher_View(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, &Options{MaxViewBytes: 1 << 20, ArtifactsURL: "http://localhost:8080/artifacts/"})
	f.bindFile(t, f.writeData(t, "orders.csv", dataV1))
	f.put(t, map[string]string{
		ArtifactDir("sales", "dash") + "/index.html": "<!doctype html><head><link rel=\"stylesheet\" href=\"style.css\"></head><body>" + InjectionPoint + "<script src=\"app.js\"></script></body>",
		ArtifactDir("sales", "dash") + "/app.js":     "render()\n",
		ArtifactDir("sales", "dash") + "/style.css":  "h1{}\n",
	})

	v, err := f.r.View(t.Context(), "sales", "dash")
	if err != nil {
		t.Fatal(err)
	}
	if v.Snapshot != nil || v.Data != nil || v.TooLarge {
		t.Errorf("before a refresh: %+v", v)
	}
	res, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
	if err != nil {
		t.Fatal(err)
	}
	v, err = f.r.View(t.Context(), "sales", "dash")
	if err != nil {
		t.Fatal(err)
	}
	want := "<!doctype html><head><style>h1{}\n</style></head><body>" + InjectionPoint + "<script>render()\n</script></body>"
	if string(v.Program) != want {
		t.Errorf("program:\n%s\nwant\n%s", v.Program, want)
	}
	// The refresh left the data in memory by column: the view does not
	// read the snapshot until its text is wanted.
	data, err := v.Injected()
	if err != nil || v.Data != nil || !v.HasData() {
		t.Errorf("the snapshot was read (%d bytes) or cannot be (%v)", len(v.Data), err)
	}
	if v.Snapshot.SHA256 != res.Binding.Snapshot.SHA256 || !strings.Contains(string(data), `"rows":3`) {
		t.Errorf("data %s of snapshot %v", data, v.Snapshot)
	}
	if v.URL != "http://localhost:8080/artifacts/sales/dash/" || v.Bytes != int64(len(v.Program)+len(data)) {
		t.Errorf("url %q, bytes %d", v.URL, v.Bytes)
	}
	if columnar, ok, err := v.Columnar(); err != nil || !ok || !strings.Contains(string(columnar.Data), `"rows":3,"values":[`) {
		t.Errorf("by column: %s, %v", columnar.Data, err)
	}
	// Another process (a new refresher) reads the snapshot.
	fresh := New(f.r.store, f.r.snaps, &f.r.opts)
	v2, err := fresh.View(t.Context(), "sales", "dash")
	if err != nil || string(v2.Data) != string(data) || v2.Bytes != v.Bytes {
		t.Errorf("read from the snapshot: %d bytes, %v", len(v2.Data), err)
	}
	if columnar, ok, err := v2.Columnar(); err != nil || !ok || !strings.Contains(string(columnar.Data), `"rows":3,"values":[`) {
		t.Errorf("by column, from the snapshot: %s, %v", columnar.Data, err)
	}

	f.r.opts.MaxViewBytes = v.Bytes - 1
	v, err = f.r.View(t.Context(), "sales", "dash")
	if err != nil || !v.TooLarge || v.HasData() || v.Snapshot == nil {
		t.Errorf("over the cap: %+v, %v", v, err)
	}

	if _, err := f.r.View(t.Context(), "sales", "nope"); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("missing artifact: %v", err)
	}
}
