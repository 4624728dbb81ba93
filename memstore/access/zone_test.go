package access

import (
	"slices"
	"testing"
)

func TestFilterZones(t *testing.T) {
	filters := map[string]Filter{
		"all":    {All: true},
		"zero":   {},
		"viewer": {Workspaces: []string{"hr", "sales"}, User: "vic"},
		"nobody": {User: "otto"},
	}
	paths := []string{
		"/memories/workspaces/sales/task.md",
		"/memories/workspaces/hr/notes/a.md",
		"/memories/workspaces/finance/task.md",
		"/memories/workspaces/sales.md",
		"/memories/users/vic/prefs.md",
		"/memories/users/otto/prefs.md",
		"/memories/users/victor/prefs.md",
		"/memories/org/rules.md",
		"/memories/notes.md",
	}
	for name, f := range filters {
		for _, p := range paths {
			if got, want := f.AllowsZone(ZoneOf(p)), f.Allows(p); got != want {
				t.Errorf("%s: AllowsZone(ZoneOf(%s)) = %v, Allows = %v", name, p, got, want)
			}
			zones, all := f.Zones()
			z := ZoneOf(p)
			if got, want := all || z == ZoneOpen || slices.Contains(zones, z), f.Allows(p); got != want {
				t.Errorf("%s: %s in Zones() = %v, Allows = %v", name, p, got, want)
			}
		}
	}
	if zones, _ := (Filter{Workspaces: []string{"b", "a"}, User: "c"}).Zones(); !slices.IsSorted(zones) {
		t.Errorf("Zones() = %v, want sorted", zones)
	}
}
