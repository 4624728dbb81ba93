package profiler

import (
	"fmt"
	"slices"
	"strings"
)

// Relationship is a candidate join from a referencing column (FromSource.
// FromColumn, the "many" side) to a referenced key (ToSource.ToColumn).
type Relationship struct {
	FromSource  string  `json:"from_source"`
	FromColumn  string  `json:"from_column"`
	ToSource    string  `json:"to_source"`
	ToColumn    string  `json:"to_column"`
	Cardinality string  `json:"cardinality"` // "many-to-one" or "one-to-one"
	Containment float64 `json:"containment"` // share of From values found in To
	NameMatch   float64 `json:"name_match"`  // 0..1
	Exact       bool    `json:"exact"`       // containment computed on complete sets
}

// Relate finds candidate join keys across the profiles of a workspace,
// keyed by source name. A relationship needs the referenced column to be
// unique, at least 90% of the referencing values to be found there, and
// either a matching name or (for non-integer identifiers) near-total
// containment. Results are sorted and deterministic.
func Relate(profiles map[string]*TableProfile) []Relationship {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []Relationship
	for _, an := range names {
		for _, bn := range names {
			if an == bn {
				continue
			}
			for _, a := range profiles[an].Columns {
				for _, b := range profiles[bn].Columns {
					if r, ok := relate(an, a, bn, b); ok {
						out = append(out, r)
					}
				}
			}
		}
	}
	return out
}

func relate(an string, a *ColumnProfile, bn string, b *ColumnProfile) (Relationship, bool) {
	if a.Join == nil || b.Join == nil || !b.Unique || len(a.Join.Hashes) == 0 {
		return Relationship{}, false
	}
	if intLike(a.Type) != intLike(b.Type) {
		return Relationship{}, false
	}
	// the key side must not be the referencing side of a 1:1 pair twice
	if a.Unique && b.Unique && a.Distinct > b.Distinct {
		return Relationship{}, false
	}
	cont, exact, n := containment(a.Join, b.Join)
	if n < 3 || cont < 0.9 {
		return Relationship{}, false
	}
	nm := nameMatch(a.Name, bn, b.Name)
	if nm == 0 && (intLike(a.Type) || cont < 0.99 || a.Distinct < 20) {
		return Relationship{}, false
	}
	card := "many-to-one"
	if a.Unique {
		card = "one-to-one"
	}
	return Relationship{FromSource: an, FromColumn: a.Name, ToSource: bn, ToColumn: b.Name,
		Cardinality: card, Containment: round(cont, 3), NameMatch: nm, Exact: exact}, true
}

// containment estimates |A∩B|/|A| from bottom-k sketches: every hash of A
// at or below B's largest kept hash can be tested exactly against B.
func containment(a, b *JoinSketch) (c float64, exact bool, tested int) {
	limit := ^uint64(0)
	if !b.Exact && len(b.Hashes) > 0 {
		limit = b.Hashes[len(b.Hashes)-1]
	}
	hit := 0
	for _, h := range a.Hashes {
		if h > limit {
			break
		}
		tested++
		if _, ok := slices.BinarySearch(b.Hashes, h); ok {
			hit++
		}
	}
	if tested == 0 {
		return 0, false, 0
	}
	return float64(hit) / float64(tested), a.Exact && b.Exact, tested
}

func normName(s string) string {
	s = strings.ToLower(s)
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == ' ' || r == '.' {
			return -1
		}
		return r
	}, s)
}

func singular(s string) string {
	s = normName(s)
	switch {
	case strings.HasSuffix(s, "ies"):
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(s, "ses"):
		return s[:len(s)-2]
	case strings.HasSuffix(s, "s"):
		return s[:len(s)-1]
	}
	return s
}

// nameMatch scores how well column a's name points at table bt's column b.
func nameMatch(a, bt, b string) float64 {
	na, nb, st := normName(a), normName(b), singular(bt)
	switch {
	case na == nb && nb != "id" && nb != "key" && nb != "code":
		return 1
	case na == st+nb, na == st+"id" && (nb == "id" || nb == st+"id"):
		return 1
	case na == st || na == st+"code" || na == st+"key":
		return 0.8
	case len(nb) >= 4 && strings.HasSuffix(na, nb):
		return 0.6
	}
	return 0
}

// RenderRelationships renders relationships as the markdown body of
// schemas/relationships.md (deterministic).
func RenderRelationships(rels []Relationship) string {
	var b strings.Builder
	b.WriteString("# Relationships\n\n")
	if len(rels) == 0 {
		b.WriteString("No candidate join keys found between the profiled sources.\n")
		return b.String()
	}
	rs := slices.Clone(rels)
	slices.SortFunc(rs, func(x, y Relationship) int {
		return strings.Compare(x.FromSource+"\x00"+x.FromColumn+"\x00"+x.ToSource+"\x00"+x.ToColumn,
			y.FromSource+"\x00"+y.FromColumn+"\x00"+y.ToSource+"\x00"+y.ToColumn)
	})
	for _, r := range rs {
		how := "estimated"
		if r.Exact {
			how = "exact"
		}
		fmt.Fprintf(&b, "- %s.%s → %s.%s: %s; %.1f%% of values found (%s)\n",
			r.FromSource, r.FromColumn, r.ToSource, r.ToColumn, r.Cardinality, 100*r.Containment, how)
	}
	return b.String()
}

// intLike reports whether a column type holds integers (measures or codes).
func intLike(t string) bool { return t == TypeInteger || t == TypeCode }
