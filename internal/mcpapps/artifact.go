package mcpapps

import (
	"fmt"

	"github.com/selmem/selmem/refresh"
)

// Artifact is an artifact's view document and what a tool result carries
// to show it: the page and its data, or a notice when there is no data yet
// or the data exceeds the view's cap.
func Artifact(v *refresh.View) (doc []byte, shown Shown) {
	title := v.Workspace + "/" + v.Artifact
	shown = Shown{URI: ViewURI(v.Workspace, v.Artifact), Workspace: v.Workspace, Artifact: v.Artifact, URL: v.URL}
	if s := v.Snapshot; s != nil {
		shown.Snapshot, shown.Rows = s.SHA256, s.Rows
	}
	var inner []byte
	switch {
	case v.Snapshot == nil:
		inner = Notice(title, fmt.Sprintf("Artifact %s has no data yet: refresh it (refresh_artifact) to load its data.", title), "")
	case v.TooLarge:
		text := fmt.Sprintf("The data of %s (%d rows; %s with its page) is larger than this view's limit of %s, so it is not shown here.",
			title, v.Snapshot.Rows, size(v.Bytes), size(v.MaxBytes))
		if v.URL == "" {
			text += fmt.Sprintf(" Open it at /artifacts/%s/%s/ on selmem's HTTP server (selmem serve --http), or raise refresh.max_view_bytes.", v.Workspace, v.Artifact)
		}
		inner = Notice(title, text, v.URL)
		shown.TooLarge = true
	default:
		program := withReporter(v.Program)
		shown.Program, shown.Data = string(program), string(v.Data)
		return Document(title, shown.Snapshot, refresh.Inject(program, v.Data)), shown
	}
	shown.Program = string(inner)
	return Document(title, shown.Snapshot, inner), shown
}

// Viewer is the view the artifact tools name in their definitions: empty
// until a tool result brings an artifact.
func Viewer() []byte {
	return Document("selmem artifact", "", Notice("selmem artifact", "Waiting for an artifact: refresh_artifact or show_artifact brings one here.", ""))
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
