package browsertest

import (
	"bytes"
	"mime"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"testing"

	"github.com/selmem/selmem/refresh/scaffold"
)

// CSP is the Content-Security-Policy artifacts are served under: the
// artifact may run its own scripts and styles and read its own origin, and
// nothing else.
const CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

// Inject returns index with snapshot (JSON) placed at the injection point,
// "<" written as \u003c so the data cannot close the script element. It
// reports false when index does not hold exactly one injection point.
func Inject(index string, snapshot []byte) (string, bool) {
	if strings.Count(index, scaffold.InjectionPoint) != 1 {
		return "", false
	}
	data := bytes.ReplaceAll(snapshot, []byte("<"), []byte(`\u003c`))
	filled := strings.TrimSuffix(scaffold.InjectionPoint, "</script>") + string(data) + "</script>"
	return strings.Replace(index, scaffold.InjectionPoint, filled, 1), true
}

// ServeArtifact serves an artifact's program files at the root of a test
// server, under CSP, with snapshot injected into index.html and served
// at data.json, as selmem's artifact server does. It stands in for that
// server in tests of programs; the server closes when the test ends.
func ServeArtifact(tb testing.TB, files map[string]string, snapshot []byte) *httptest.Server {
	tb.Helper()
	index, ok := Inject(files[scaffold.FileIndex], snapshot)
	if !ok {
		tb.Fatalf("browsertest: %s does not hold exactly one injection point %s", scaffold.FileIndex, scaffold.InjectionPoint)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		var body string
		switch name {
		case "", scaffold.FileIndex:
			name, body = scaffold.FileIndex, index
		case "data.json":
			body = string(snapshot)
		default:
			var ok bool
			if body, ok = files[name]; !ok {
				http.NotFound(w, r)
				return
			}
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		h.Set("Content-Type", ctype)
		_, _ = w.Write([]byte(body))
	}))
	tb.Cleanup(srv.Close)
	return srv
}
