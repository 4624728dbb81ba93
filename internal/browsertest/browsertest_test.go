package browsertest

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/selmem/selmem/refresh/scaffold"
)

func TestFind_Env(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "chromium.txt")
	exe := filepath.Join(dir, "my-chromium")
	if err := os.WriteFile(notExec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		env     string
		want    string
		wantErr bool
	}{
		{exe, exe, false},
		{notExec, "", true},
		{dir, "", true},
		{filepath.Join(dir, "missing"), "", true},
	} {
		t.Setenv(EnvBrowser, tt.env)
		got, err := Find()
		if tt.wantErr {
			if !errors.Is(err, ErrNoBrowser) || !strings.Contains(err.Error(), EnvBrowser) {
				t.Errorf("Find with %s=%s: %q, %v; want an error naming %s that wraps ErrNoBrowser", EnvBrowser, tt.env, got, err, EnvBrowser)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Find with %s=%s = %q, %v; want %q", EnvBrowser, tt.env, got, err, tt.want)
		}
	}
}

func TestInject(t *testing.T) {
	index := "<p>x</p>" + scaffold.InjectionPoint
	got, ok := Inject(index, []byte(`{"records":[{"s":"</script><script>alert(1)</script>"}]}`))
	if !ok {
		t.Fatal("Inject refused an index with one injection point")
	}
	if strings.Count(got, "</script>") != 1 || !strings.Contains(got, `\u003c/script>\u003cscript>`) {
		t.Errorf("Inject did not escape <: %s", got)
	}
	for _, bad := range []string{"<p>no point</p>", scaffold.InjectionPoint + scaffold.InjectionPoint} {
		if _, ok := Inject(bad, []byte(`{}`)); ok {
			t.Errorf("Inject accepted %q", bad)
		}
	}
}

// salesV1 is the shared fixture testdata/sales/v1.json.
func salesV1(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sales", "v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// counter is a server on another origin that counts the requests it sees.
func counter(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write([]byte("leaked"))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestPage_ScaffoldUnderCSP renders a scaffolded dashboard served with the
// sample data under the artifact CSP, then checks from inside the page that
// its own data.json is readable and that another origin is not reachable.
func TestPage_ScaffoldUnderCSP(t *testing.T) {
	files, err := scaffold.Dashboard("Weekly sales", []scaffold.Column{
		{Name: "order_id", Type: "text"}, {Name: "region", Type: "text"}, {Name: "day", Type: "date"},
		{Name: "units", Type: "integer"}, {Name: "amount", Type: "number"},
	})
	if err != nil {
		t.Fatal(err)
	}
	art := ServeArtifact(t, files, salesV1(t))
	other, hits := counter(t)

	p := New(t).NewPage(t)
	p.Navigate(art.URL + "/")
	p.WaitFor(`document.body.getAttribute("data-state") === "ready"`)

	got := p.Texts("#rows", "#total", "#insight")
	want := map[string]string{
		"#rows":    "12",
		"#total":   "10,695",
		"#insight": "EMEA leads with 48% of amount, ahead of AMER (27%), across 4 region values.",
	}
	for sel, w := range want {
		if got[sel] != w {
			t.Errorf("%s = %q, want %q", sel, got[sel], w)
		}
	}
	if n := Eval[int](p, `document.querySelectorAll("#chart rect.bar").length`); n != 4 {
		t.Errorf("chart has %d bars, want 4 (one per region)", n)
	}
	if v := p.Violations(); len(v) != 0 {
		t.Errorf("the dashboard itself caused CSP violations: %+v", v)
	}
	for _, m := range p.Console() {
		if m.IsException() || m.Type == "error" {
			t.Errorf("console: %s", m)
		}
	}

	// Same origin: allowed.
	if rows := Eval[int](p, `fetch("data.json").then(r => r.json()).then(d => d.rows)`); rows != 12 {
		t.Errorf("data.json rows = %d, want 12", rows)
	}
	// Another origin: blocked before any request leaves the browser.
	res := Eval[string](p, `fetch(`+jsString(other.URL+"/")+`).then(() => "allowed", e => "blocked: " + e.name)`)
	if res != "blocked: TypeError" {
		t.Errorf("cross-origin fetch from the page: %s, want blocked: TypeError", res)
	}
	v := p.WaitViolation(func(v Violation) bool { return strings.HasPrefix(v.BlockedURI, other.URL) })
	p.WaitConsole(func(m ConsoleMessage) bool {
		return m.Source == "security" && strings.Contains(m.Text, other.URL) && strings.Contains(m.Text, "connect-src")
	})
	if v.EffectiveDirective != "connect-src" || v.Disposition != "enforce" {
		t.Errorf("violation %+v, want an enforced connect-src violation", v)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other origin saw %d requests, want 0", n)
	}
}

// TestPage_OtherLoadsBlocked checks the other ways out of a page: an image,
// a script and a form to another origin.
func TestPage_OtherLoadsBlocked(t *testing.T) {
	other, hits := counter(t)
	index := `<!doctype html><html><body>
<img id="img" src="` + other.URL + `/pixel.png">
<script src="` + other.URL + `/lib.js"></script>
<form id="f" action="` + other.URL + `/post" method="post"></form>
<p id="ok">loaded</p>
` + scaffold.InjectionPoint + `
</body></html>`
	art := ServeArtifact(t, map[string]string{scaffold.FileIndex: index}, []byte(`{"columns":[],"records":[],"rows":0}`))

	p := New(t).NewPage(t)
	p.Navigate(art.URL + "/")
	p.WaitVisible("#ok")
	for _, dir := range []string{"img-src", "script-src-elem"} {
		p.WaitViolation(func(v Violation) bool { return v.EffectiveDirective == dir })
	}
	Eval[any](p, `document.getElementById("f").submit()`)
	p.WaitViolation(func(v Violation) bool { return v.EffectiveDirective == "form-action" })
	if n := hits.Load(); n != 0 {
		t.Errorf("the other origin saw %d requests, want 0", n)
	}
}

// recorder is a testing.TB that records the first Skipf or Fatalf instead
// of ending the test.
type recorder struct {
	testing.TB
	verdict string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	if r.verdict == "" {
		r.verdict = "skip: " + fmt.Sprintf(format, args...)
	}
}

func (r *recorder) Fatalf(format string, args ...any) {
	if r.verdict == "" {
		r.verdict = "fail: " + fmt.Sprintf(format, args...)
	}
}

func TestRequire_NoBrowser(t *testing.T) {
	t.Setenv(EnvBrowser, filepath.Join(t.TempDir(), "missing"))
	for ci, want := range map[string]string{"true": "fail: ", "": "skip: "} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		Require(r)
		if !strings.HasPrefix(r.verdict, want) || !strings.Contains(r.verdict, "install-chromium.sh") {
			t.Errorf("CI=%q: Require: %q, want %q… naming the install script", ci, r.verdict, want)
		}
	}
}
