package refresh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strings"

	"github.com/selmem/selmem/memstore"
)

// ContentSecurityPolicy is the policy artifacts are served under: the
// artifact runs its own scripts and styles and reads its own data, and
// reaches nothing else — no other origin, no form target, no framing by
// other pages.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

// DataFile is the same-origin URL, relative to an artifact, of its data.
const DataFile = "data.json"

// injectionPoint is the element the current data is placed in.
var injectionPoint = regexp.MustCompile(`(?is)<script\b[^>]*\bid\s*=\s*["']?selmem-data["']?[^>]*>.*?</script\s*>`)

// headElement is the opening head tag, after which a program without an
// injection point gets one.
var headElement = regexp.MustCompile(`(?i)<head\b[^>]*>`)

// InjectionPoint is the element an artifact's index.html holds for its
// data.
const InjectionPoint = `<script type="application/json" id="selmem-data"></script>`

// servedExt are the program files an artifact may serve, by content type.
var servedExt = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".json": "application/json",
}

// Inject places data at a program's injection point. A program without
// one gets the element at the start of its head (or of the document).
func Inject(html, data []byte) []byte {
	el := append(append([]byte(`<script type="application/json" id="selmem-data">`), data...), "</script>"...)
	if loc := injectionPoint.FindIndex(html); loc != nil {
		return append(append(append([]byte{}, html[:loc[0]]...), el...), html[loc[1]:]...)
	}
	at := 0
	if m := headElement.FindIndex(html); m != nil {
		at = m[1]
	}
	return append(append(append([]byte{}, html[:at]...), el...), html[at:]...)
}

// Handler serves artifacts under prefix (e.g. "/artifacts/"):
// prefix<ws>/<artifact>/ is index.html with the current snapshot injected,
// prefix<ws>/<artifact>/data.json the snapshot, and other .html, .js,
// .css and .svg files of the artifact's directory as they are committed.
// Every answer carries ContentSecurityPolicy; the binding and anything
// outside the artifact are never served.
func (r *Refresher) Handler(prefix string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rest, ok := strings.CutPrefix(req.URL.Path, prefix)
		parts := strings.SplitN(rest, "/", 3)
		if !ok || len(parts) < 2 || CheckArtifact(parts[0], parts[1]) != nil {
			http.NotFound(w, req)
			return
		}
		ws, artifact := parts[0], parts[1]
		if len(parts) == 2 {
			http.Redirect(w, req, path.Base(req.URL.Path)+"/", http.StatusMovedPermanently)
			return
		}
		file := parts[2]
		if file == "" {
			file = "index.html"
		}
		status, body, ctype := r.serve(req.Context(), ws, artifact, file)
		h.Set("Content-Type", ctype)
		w.WriteHeader(status)
		if req.Method == http.MethodGet {
			w.Write(body)
		}
	})
}

// serve answers one file of an artifact: status, body and content type.
func (r *Refresher) serve(ctx context.Context, ws, artifact, file string) (int, []byte, string) {
	const text = "text/plain; charset=utf-8"
	clean := path.Clean("/" + file)[1:]
	ctype, ok := servedExt[strings.ToLower(path.Ext(clean))]
	if clean != file || !ok || clean == BindingName || strings.HasPrefix(path.Base(clean), ".") {
		return http.StatusNotFound, []byte("404 page not found\n"), text
	}
	b, err := r.ReadBinding(ctx, ws, artifact)
	if err != nil {
		return http.StatusNotFound, []byte(fmt.Sprintf("artifact %s/%s is not bound to data\n", ws, artifact)), text
	}
	var data []byte
	if file == DataFile || file == "index.html" {
		if b.Snapshot == nil {
			return http.StatusConflict, []byte(fmt.Sprintf("artifact %s/%s has no data yet: run `selmem refresh %s %s`\n", ws, artifact, ws, artifact)), text
		}
		data, err = r.snaps.Bound(ws, artifact, b.Snapshot.SHA256)
		if errors.Is(err, memstore.ErrNotFound) {
			return http.StatusGone, []byte(fmt.Sprintf("the data artifact %s/%s is bound to (snapshot %s of %s) is no longer retained: refresh it to load current data\n",
				ws, artifact, b.Snapshot.SHA256[:12], b.Snapshot.RefreshedAt.Format("2006-01-02 15:04 UTC"))), text
		}
		if err != nil {
			r.log.Warn("refresh: reading a snapshot failed", "err", err)
			return http.StatusInternalServerError, []byte("the artifact's data cannot be read\n"), text
		}
		if file == DataFile {
			return http.StatusOK, data, servedExt[".json"]
		}
	}
	content, _, err := r.store.Read(ctx, ArtifactDir(ws, artifact)+"/"+clean)
	if err != nil {
		return http.StatusNotFound, []byte("404 page not found\n"), text
	}
	if file == "index.html" {
		content = Inject(content, data)
	}
	return http.StatusOK, bytes.Clone(content), ctype
}
