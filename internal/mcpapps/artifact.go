package mcpapps

import (
	"fmt"
	"sync"

	"github.com/selmem/selmem/refresh"
)

// Result is what a tool result carries to show an artifact: its program
// and its data by column (refresh.View.Columnar), or a notice when there
// is no data yet or the data exceeds the view's cap.
func Result(v *refresh.View) (Shown, error) {
	shown, inner := shownOf(v)
	if inner != nil {
		shown.Program = string(inner)
		return shown, nil
	}
	data, ok, err := v.Columnar()
	if err != nil {
		return Shown{}, err
	}
	if ok {
		shown.Data, shown.Numbers = string(data.Data), string(data.Numbers)
	}
	return shown, nil
}

// Artifact is an artifact's view document: the page with its data
// injected, or a notice. It fails when the data cannot be read.
func Artifact(v *refresh.View) ([]byte, error) {
	shown, inner := shownOf(v)
	if inner == nil {
		data, err := v.Injected()
		if err != nil {
			return nil, err
		}
		inner = refresh.Inject([]byte(shown.Program), data)
	}
	return Document(v.Workspace+"/"+v.Artifact, shown.Snapshot, shown.Note, inner), nil
}

// shownOf fills what a view shows but the data; inner is the notice page
// to show instead of the program, nil when the program shows data.
func shownOf(v *refresh.View) (shown Shown, inner []byte) {
	title := v.Workspace + "/" + v.Artifact
	shown = Shown{URI: ViewURI(v.Workspace, v.Artifact), Workspace: v.Workspace, Artifact: v.Artifact, URL: v.URL, ProgramKey: v.ProgramKey}
	if s := v.Snapshot; s != nil {
		shown.Snapshot, shown.Rows = s.SHA256, s.Rows
	}
	switch {
	case v.Snapshot == nil:
		return shown, Notice(title, fmt.Sprintf("Artifact %s has no data yet: refresh it (refresh_artifact) to load its data.", title), "")
	case v.TooLarge:
		text := fmt.Sprintf("The data of %s (%d rows; %s with its page) is larger than this view's limit of %s, so it is not shown here.",
			title, v.Snapshot.Rows, size(v.Bytes), size(v.MaxBytes))
		if v.URL == "" {
			text += fmt.Sprintf(" Open it at /artifacts/%s/%s/ on selmem's HTTP server (selmem serve --http), or raise refresh.max_view_bytes.", v.Workspace, v.Artifact)
		}
		shown.TooLarge = true
		return shown, Notice(title, text, v.URL)
	}
	if a := v.Aggregate; a != nil {
		shown.Aggregate = true
		groups := fmt.Sprintf("%d groups", a.Groups)
		if a.Limit > 0 && a.Groups > a.Limit {
			groups = fmt.Sprintf("the first %d of %d groups", a.Limit, a.Groups)
		}
		shown.Note = fmt.Sprintf("Showing an aggregate of the %d rows (%s; %s): the data with its page (%s) is larger than this view's limit of %s.",
			a.OfRows, a.Describe(), groups, size(v.Bytes), size(v.MaxBytes))
	}
	shown.Program = string(withFrameScript(v.Program))
	return shown, nil
}

// Documents caches view documents, one per view, for as long as its
// program and data stay the same.
type Documents struct {
	mu   sync.Mutex
	docs map[string]cachedDoc
}

type cachedDoc struct {
	key string
	doc []byte
}

// Artifact is Artifact(v), from the cache when v's program and data are
// those of the document cached for its view.
func (d *Documents) Artifact(v *refresh.View) ([]byte, error) {
	key := fmt.Sprintf("%s\x00%v\x00%v\x00%d\x00%s", v.ProgramKey, v.Snapshot, v.Aggregate, v.MaxBytes, v.URL)
	uri := ViewURI(v.Workspace, v.Artifact)
	d.mu.Lock()
	c, ok := d.docs[uri]
	d.mu.Unlock()
	if ok && c.key == key {
		return c.doc, nil
	}
	doc, err := Artifact(v)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.docs == nil {
		d.docs = map[string]cachedDoc{}
	}
	d.docs[uri] = cachedDoc{key: key, doc: doc}
	return doc, nil
}

// Viewer is the view the artifact tools name in their definitions: empty
// until a tool result brings an artifact.
func Viewer() []byte {
	return Document("selmem artifact", "", "", Notice("selmem artifact", "Waiting for an artifact: refresh_artifact or show_artifact brings one here.", ""))
}

// size is a byte count for people.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
