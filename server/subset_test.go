package server_test

import (
	"maps"
	"slices"
	"testing"
)

// TestServe_ToolsSubset: tools.subset memory serves only the six file
// commands of Anthropic's memory tool.
func TestServe_ToolsSubset(t *testing.T) {
	t.Setenv("SELMEM_TOOLS_SUBSET", "memory")
	cs := connectStdio(t, t.TempDir(), eras[0])
	got := slices.Sorted(maps.Keys(toolsOf(t, cs)))
	want := []string{"memory_create", "memory_delete", "memory_insert", "memory_rename", "memory_str_replace", "memory_view"}
	if !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
}
