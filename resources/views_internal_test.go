package resources

import (
	"slices"
	"testing"

	"github.com/selmem/selmem/internal/mcpapps"
)

// TestClassify_ArtifactView: a write to an artifact updates its MCP Apps
// view, so that a host subscribed to the view hears of each refresh.
func TestClassify_ArtifactView(t *testing.T) {
	tests := []struct {
		path string
		want []string
	}{
		{"/memories/workspaces/sales/artifacts/dash/binding.yaml", []string{ResourceURI("sales", KindArtifacts), mcpapps.ViewURI("sales", "dash")}},
		{"/memories/workspaces/sales/artifacts/dash/js/app.js", []string{ResourceURI("sales", KindArtifacts), mcpapps.ViewURI("sales", "dash")}},
		{"/memories/workspaces/sales/artifacts", []string{ResourceURI("sales", KindArtifacts)}},
	}
	for _, tt := range tests {
		if got := classify(tt.path).uris; !slices.Equal(got, tt.want) {
			t.Errorf("classify(%s) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
