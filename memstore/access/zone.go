package access

import (
	"slices"
	"strings"
)

// Zones are the parts of the memory a Filter grants or withholds as a
// whole. Both index backends store each chunk's zone and filter on it, so
// that they agree with Filter.Allows on every path.
const (
	// ZoneOpen is the zone of everything outside a workspace or user
	// directory (org/ and other paths): every filter lets it through.
	ZoneOpen      = ""
	zoneWorkspace = "w:"
	zoneUser      = "u:"
)

// ZoneOf returns the zone of the virtual path vp: "w:<ws>" under
// /memories/workspaces/<ws>/, "u:<user>" under /memories/users/<user>/,
// ZoneOpen elsewhere.
func ZoneOf(vp string) string {
	switch a := Classify(vp); a.Kind {
	case AreaWorkspace:
		return zoneWorkspace + a.Workspace
	case AreaUser:
		return zoneUser + a.User
	}
	return ZoneOpen
}

// Zones returns the zones other than ZoneOpen that f lets through, sorted,
// and whether f lets everything through. A chunk passes f when f.All, when
// its zone is ZoneOpen, or when its zone is one of these. The zero Filter
// lets only ZoneOpen through.
func (f Filter) Zones() (zones []string, all bool) {
	if f.All {
		return nil, true
	}
	zones = make([]string, 0, len(f.Workspaces)+1)
	for _, ws := range f.Workspaces {
		zones = append(zones, zoneWorkspace+ws)
	}
	if f.User != "" {
		zones = append(zones, zoneUser+f.User)
	}
	slices.Sort(zones)
	return slices.Compact(zones), false
}

// AllowsZone reports whether f lets a chunk of zone z through; for every
// virtual path vp, f.AllowsZone(ZoneOf(vp)) == f.Allows(vp).
func (f Filter) AllowsZone(z string) bool {
	if f.All || z == ZoneOpen {
		return true
	}
	if ws, ok := strings.CutPrefix(z, zoneWorkspace); ok {
		return slices.Contains(f.Workspaces, ws)
	}
	u, ok := strings.CutPrefix(z, zoneUser)
	return ok && f.User != "" && u == f.User
}
