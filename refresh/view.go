package refresh

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/selmem/selmem/memstore"
)

// DefaultMaxViewBytes caps, by default, a view's program with its data.
const DefaultMaxViewBytes = 2 << 20

// MaxAggregateBytes bounds the snapshots a view aggregates (a view holds
// the snapshot in memory, by column, to aggregate it); a larger one is too
// large to inline even with an aggregate declared.
const MaxAggregateBytes = 64 << 20

// View is what an artifact shows where no same-origin server is at hand
// (an MCP Apps host): its program as one self-contained document, and the
// current data to place at its injection point.
type View struct {
	Workspace, Artifact string
	// Program is index.html with the artifact's own scripts and style
	// sheets inlined and an empty injection point (InjectionPoint).
	Program []byte
	// ProgramKey identifies the program's files as committed.
	ProgramKey string
	// Data is what the view injects: the current snapshot, or the
	// binding's aggregate of it (Aggregate); nil when there is no data
	// yet or when TooLarge, and when the snapshot has not been read
	// because its data is held by column (see Injected).
	Data []byte
	// Aggregate, when not nil, says Data is the aggregate the binding
	// declares, shown because the data exceeds the cap.
	Aggregate *AggregateInfo
	// Snapshot describes the current data; nil before the first refresh.
	Snapshot *SnapshotRef
	// TooLarge says the program with its data exceeds the cap
	// (Options.MaxViewBytes) and no aggregate is declared (or it exceeds
	// the cap too): the data is left out.
	TooLarge bool
	// Bytes is the size of the program with the snapshot's data.
	Bytes int64
	// MaxBytes is the cap applied.
	MaxBytes int64
	// URL is where the artifact is served over HTTP; "" when no address is
	// configured (Options.ArtifactsURL).
	URL string

	columnar func() (Columnar, error)
	// snapshot reads the snapshot when Data was left out.
	snapshot func() ([]byte, error)
}

// HasData reports whether the view shows data (Data, read or not).
func (v *View) HasData() bool { return v.Data != nil || v.snapshot != nil }

// Injected is what the view injects: Data, the snapshot read when Data
// was left out; nil when the view shows no data.
func (v *View) Injected() ([]byte, error) {
	if v.Data != nil || v.snapshot == nil {
		return v.Data, nil
	}
	return v.snapshot()
}

// Columnar is the injected data encoded by column (Frame.Columnar),
// compact for a tool result; ok is false when the view shows no data. It
// is computed once per snapshot, from the data a refresh of this process
// loaded or else from the snapshot.
func (v *View) Columnar() (c Columnar, ok bool, err error) {
	switch {
	case !v.HasData():
		return Columnar{}, false, nil
	case v.columnar == nil: // a View made by hand
		f, err := DecodeFrame(v.Data)
		if err != nil {
			return Columnar{}, false, err
		}
		return f.Columnar(nil), true, nil
	}
	c, err = v.columnar()
	return c, err == nil, err
}

// SetArtifactsURL sets where artifacts are served over HTTP
// (Options.ArtifactsURL), once a listener's address is known. Call it
// before the refresher is used.
func (r *Refresher) SetArtifactsURL(u string) { r.opts.ArtifactsURL = u }

var (
	scriptSrc = regexp.MustCompile(`(?is)<script\b[^>]*?\bsrc\s*=\s*["']?([^"'\s>]+)["']?[^>]*>\s*</script\s*>`)
	linkTag   = regexp.MustCompile(`(?is)<link\b[^>]*>`)
	hrefAttr  = regexp.MustCompile(`(?is)\bhref\s*=\s*["']?([^"'\s>]+)`)
	relSheet  = regexp.MustCompile(`(?is)\brel\s*=\s*["']?stylesheet\b`)
	endScript = regexp.MustCompile(`(?i)</script`)
	endStyle  = regexp.MustCompile(`(?i)</style`)
)

// View reads an artifact's view: its program made self-contained and its
// current data, within the cap on view size.
func (r *Refresher) View(ctx context.Context, ws, artifact string) (*View, error) {
	b, err := r.ReadBinding(ctx, ws, artifact)
	if err != nil {
		return nil, err
	}
	files, key, err := r.Program(ctx, ws, artifact)
	if err != nil {
		return nil, err
	}
	index, ok := files["index.html"]
	if !ok {
		return nil, notFound(fmt.Sprintf("artifact %s/%s has no index.html.", ws, artifact),
			"Write the artifact's page to "+ArtifactDir(ws, artifact)+"/index.html.")
	}
	v := &View{Workspace: ws, Artifact: artifact, Snapshot: b.Snapshot, MaxBytes: r.opts.MaxViewBytes,
		Program: Inject([]byte(inline(index, files)), nil), ProgramKey: key}
	if base := r.opts.ArtifactsURL; base != "" {
		v.URL = strings.TrimSuffix(base, "/") + "/" + ws + "/" + artifact + "/"
	}
	v.Bytes = int64(len(v.Program))
	if b.Snapshot == nil {
		return v, nil
	}
	sha := b.Snapshot.SHA256
	gone := func(err error) error {
		if errors.Is(err, memstore.ErrNotFound) {
			return notFound(fmt.Sprintf("the data artifact %s/%s is bound to (snapshot %s) is no longer retained.", ws, artifact, sha[:12]),
				"Refresh it with refresh_artifact to load current data.")
		}
		return err
	}
	// Only a snapshot the artifact retains is its data, whether its text
	// is read or its columns are held by the cache (see Snapshots.Bound).
	if err := r.snaps.retained(ws, artifact, sha); err != nil {
		return nil, gone(err)
	}
	read := func() ([]byte, error) {
		data, err := r.snaps.Get(sha) // retained: checked above
		return data, gone(err)
	}
	// A snapshot held by column is read only if its text is wanted (the
	// view's document); a tool result encodes the columns.
	var data []byte
	size, held := r.views.size(sha)
	if !held {
		var err error
		if data, err = read(); err != nil {
			return nil, err
		}
		size = int64(len(data))
	}
	v.Bytes += size
	frame := func() (*Frame, error) {
		if data == nil {
			d, err := read()
			if err != nil {
				return nil, err
			}
			data = d
		}
		return r.views.frame(sha, data)
	}
	if v.Bytes <= v.MaxBytes {
		v.Data = data
		if data == nil {
			v.snapshot = read
		}
		v.columnar = func() (Columnar, error) { return r.views.encoded(sha, "", frame, nil) }
		return v, nil
	}
	if b.View == nil || b.View.Aggregate == nil || size > MaxAggregateBytes {
		v.TooLarge = true
		return v, nil
	}
	a, err := r.views.aggregate(sha, b.View.Aggregate, frame)
	if err != nil {
		return nil, err
	}
	if int64(len(v.Program)+len(a.records)) > v.MaxBytes {
		v.TooLarge = true
		return v, nil
	}
	v.Data, v.Aggregate = a.records, &a.info
	v.columnar = func() (Columnar, error) { return a.columnar, nil }
	return v, nil
}

// inline replaces the program's references to its own scripts and style
// sheets by their content, so that the page needs no server. References
// to anything else are left as they are (the view's policy blocks them).
func inline(index string, files map[string]string) string {
	own := func(ref string) (string, bool) {
		if strings.Contains(ref, ":") || strings.HasPrefix(ref, "/") || strings.ContainsAny(ref, "?#") {
			return "", false
		}
		name := path.Clean(ref)
		if name == BindingName || strings.HasPrefix(name, "../") {
			return "", false
		}
		content, ok := files[name]
		return content, ok
	}
	index = scriptSrc.ReplaceAllStringFunc(index, func(tag string) string {
		content, ok := own(scriptSrc.FindStringSubmatch(tag)[1])
		if !ok {
			return tag
		}
		return "<script>" + endScript.ReplaceAllString(content, `<\/script`) + "</script>"
	})
	return linkTag.ReplaceAllStringFunc(index, func(tag string) string {
		href := hrefAttr.FindStringSubmatch(tag)
		if href == nil || !relSheet.MatchString(tag) {
			return tag
		}
		content, ok := own(href[1])
		if !ok {
			return tag
		}
		return "<style>" + endStyle.ReplaceAllString(content, `<\/style`) + "</style>"
	})
}
