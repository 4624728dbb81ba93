package lint

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Column is one column of a snapshot: its name and type (integer, number,
// boolean, date, timestamp or text). An empty type is inferred from the
// first non-null value.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Snapshot is the data an artifact is checked against, in the shape
// injected into artifacts: {"columns":[…],"records":[{…}],"rows":N}. It
// decodes from that JSON with encoding/json; records may also hold Go
// numbers (int, int64, float64, json.Number) and strings.
type Snapshot struct {
	Columns []Column         `json:"columns"`
	Records []map[string]any `json:"records"`
	Rows    int              `json:"rows"`
}

// Limits that bound the work on large snapshots.
const (
	// maxDistinctText is the most distinct values a text or date column
	// may have for its values to be looked for; columns with more are
	// identifiers or free text, not categories.
	maxDistinctText = 1000
	// maxGroupColumns and maxGroups bound the per-category aggregates.
	maxGroupColumns = 4
	maxGroups       = 100
	// maxValueRunes: longer text values are not looked for.
	maxValueRunes = 200
)

// numEntry is a number found in the data (agg == "") or computed from it.
type numEntry struct {
	v   float64 // absolute value
	col string  // the column it belongs to; "" for the row count
	agg string  // what was computed, e.g. "the total"; "" for a value
}

// textEntry is a category or date value.
type textEntry struct {
	value string
	col   string
	kind  Kind
	plain bool // a lower-case word: matched only as a whole string
}

// numColumn holds the distinct magnitudes of a numeric column's values.
type numColumn struct {
	name string
	vals []float64 // sorted, distinct
}

// index is what Program looks literals up in.
type index struct {
	numCols []numColumn
	aggs    []numEntry // sorted by v, then agg, then col
	texts   []textEntry
	cols    map[string]bool // lower-cased column names
}

type colKind int

const (
	colSkip colKind = iota
	colNumber
	colText
	colDate
)

func kindOf(c Column, records []map[string]any) colKind {
	switch strings.ToLower(c.Type) {
	case "integer", "number", "decimal", "float", "double", "int":
		return colNumber
	case "text", "string":
		return colText
	case "date", "timestamp", "datetime":
		return colDate
	case "":
	default:
		return colSkip
	}
	for _, r := range records {
		switch r[c.Name].(type) {
		case nil:
			continue
		case string:
			return colText
		case bool:
			return colSkip
		default:
			if _, ok := toFloat(r[c.Name]); ok {
				return colNumber
			}
			return colSkip
		}
	}
	return colSkip
}

// toFloat returns v as a number when it is one (or a numeric string).
func toFloat(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case json.Number:
		g, err := x.Float64()
		if err != nil {
			return 0, false
		}
		f = g
	case string:
		g, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, false
		}
		f = g
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f = float64(rv.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f = float64(rv.Uint())
		case reflect.Float32, reflect.Float64:
			f = rv.Float()
		default:
			return 0, false
		}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func textValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case fmt.Stringer:
		return x.String(), true
	}
	return "", false
}

// stopWords are category values too common as interface words to report.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "by": true, "in": true, "on": true, "to": true,
	"and": true, "or": true, "with": true, "for": true, "at": true, "is": true, "no": true,
	"yes": true, "none": true, "null": true, "n/a": true, "na": true, "other": true,
	"others": true, "total": true, "all": true, "unknown": true, "true": true, "false": true,
	"rows": true, "row": true, "more": true, "blank": true, "(blank)": true, "-": true, "–": true,
}

func newIndex(snap Snapshot) *index {
	x := &index{cols: make(map[string]bool, len(snap.Columns))}
	for _, c := range snap.Columns {
		x.cols[strings.ToLower(strings.TrimSpace(c.Name))] = true
	}
	var numeric, groupCols []string
	for _, c := range snap.Columns {
		switch kindOf(c, snap.Records) {
		case colNumber:
			numeric = append(numeric, c.Name)
			x.addColumnNumbers(c.Name, snap.Records)
		case colText:
			if x.addTexts(c.Name, KindCategory, snap.Records) && len(groupCols) < maxGroupColumns {
				groupCols = append(groupCols, c.Name)
			}
		case colDate:
			x.addTexts(c.Name, KindDate, snap.Records)
		}
	}
	for _, n := range []int{len(snap.Records), snap.Rows} {
		if n > 0 {
			x.aggs = append(x.aggs, numEntry{v: float64(n), agg: "the row count"})
		}
	}
	for _, g := range groupCols {
		x.addGroups(g, numeric, snap.Records)
	}
	sort.Slice(x.aggs, func(i, j int) bool {
		a, b := x.aggs[i], x.aggs[j]
		if a.v != b.v {
			return a.v < b.v
		}
		if a.agg != b.agg {
			return a.agg < b.agg
		}
		return a.col < b.col
	})
	// Longer values first, so "North America" is reported before "America".
	sort.Slice(x.texts, func(i, j int) bool {
		a, b := x.texts[i], x.texts[j]
		if len(a.value) != len(b.value) {
			return len(a.value) > len(b.value)
		}
		if a.value != b.value {
			return a.value < b.value
		}
		return a.col < b.col
	})
	return x
}

func (x *index) addColumnNumbers(col string, records []map[string]any) {
	var sum float64
	vals := make([]float64, 0, len(records))
	for _, r := range records {
		f, ok := toFloat(r[col])
		if !ok {
			continue
		}
		vals = append(vals, math.Abs(f))
		sum += f
	}
	n := len(vals)
	slices.Sort(vals)
	x.numCols = append(x.numCols, numColumn{name: col, vals: slices.Compact(vals)})
	if n > 1 {
		x.aggs = append(x.aggs,
			numEntry{v: math.Abs(sum), col: col, agg: "the total"},
			numEntry{v: math.Abs(sum / float64(n)), col: col, agg: "the mean"})
	}
}

// addTexts indexes the distinct values of a text or date column and
// reports whether the column is a category (few enough distinct values).
func (x *index) addTexts(col string, kind Kind, records []map[string]any) bool {
	seen := map[string]bool{}
	for _, r := range records {
		s, ok := textValue(r[col])
		if !ok || seen[s] {
			continue
		}
		seen[s] = true
		if len(seen) > maxDistinctText {
			return false
		}
	}
	for s := range seen {
		if x.reportable(s, kind) {
			x.texts = append(x.texts, textEntry{value: s, col: col, kind: kind, plain: isPlainWord(s)})
		}
	}
	return true
}

// reportable reports whether a text value is worth looking for: not
// blank, not a single character, not a column name, not a common word,
// not a bare number (numbers are matched as numbers), not too long.
func (x *index) reportable(s string, kind Kind) bool {
	t := strings.TrimSpace(s)
	if t != s || utf8.RuneCountInString(t) < 2 || utf8.RuneCountInString(t) > maxValueRunes {
		return false
	}
	if x.cols[strings.ToLower(t)] || stopWords[strings.ToLower(t)] {
		return false
	}
	if kind == KindCategory {
		if _, err := strconv.ParseFloat(t, 64); err == nil {
			return false
		}
	}
	return true
}

// addGroups adds, for each value of the category column cat, the number
// of rows and the total of each numeric column.
func (x *index) addGroups(cat string, numeric []string, records []map[string]any) {
	type group struct {
		rows int
		sums []float64
	}
	groups := map[string]*group{}
	for _, r := range records {
		k, ok := textValue(r[cat])
		if !ok {
			continue
		}
		g := groups[k]
		if g == nil {
			if len(groups) == maxGroups {
				return
			}
			g = &group{sums: make([]float64, len(numeric))}
			groups[k] = g
		}
		g.rows++
		for i, col := range numeric {
			if f, ok := toFloat(r[col]); ok {
				g.sums[i] += f
			}
		}
	}
	if len(groups) < 2 {
		return
	}
	for k, g := range groups {
		if g.rows > 1 {
			x.aggs = append(x.aggs, numEntry{v: float64(g.rows), col: cat,
				agg: "the number of rows with " + cat + " " + quoteShort(k)})
		}
		for i, col := range numeric {
			x.aggs = append(x.aggs, numEntry{v: math.Abs(g.sums[i]), col: col,
				agg: "the total for " + cat + " " + quoteShort(k)})
		}
	}
}

// matchNumber looks up a literal with magnitude v written with decimals
// digits after the point and sig significant digits. An exact match is
// preferred; a match by rounding counts only for aggregates or for
// literals with decimals, and only with at least three significant
// digits, since short rounded numbers match by coincidence.
func (x *index) matchNumber(v float64, decimals, sig int) (numEntry, bool) {
	half := 0.5 * math.Pow(10, -float64(decimals))
	eps := 1e-9 * math.Max(1, v)
	lo, hi := v-half-eps, v+half+eps
	exact := func(e float64) bool { return math.Abs(e-v) <= eps }
	rounds := func(e float64) bool { return sig >= 3 && roundTo(e, decimals) == roundTo(v, decimals) }
	var rounded *numEntry
	for _, c := range x.numCols {
		for i := sort.SearchFloat64s(c.vals, lo); i < len(c.vals) && c.vals[i] <= hi; i++ {
			if exact(c.vals[i]) {
				return numEntry{v: c.vals[i], col: c.name}, true
			}
			if rounded == nil && decimals >= 1 && rounds(c.vals[i]) {
				rounded = &numEntry{v: c.vals[i], col: c.name}
			}
		}
	}
	i := sort.Search(len(x.aggs), func(i int) bool { return x.aggs[i].v >= lo })
	for ; i < len(x.aggs) && x.aggs[i].v <= hi; i++ {
		if exact(x.aggs[i].v) {
			return x.aggs[i], true
		}
		if rounded == nil && rounds(x.aggs[i].v) {
			rounded = &x.aggs[i]
		}
	}
	if rounded != nil {
		return *rounded, true
	}
	return numEntry{}, false
}

func roundTo(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

// isPlainWord reports a value made of lower-case letters (and inner
// hyphens) only, such as "open" or "e-mail".
func isPlainWord(s string) bool {
	for i, r := range s {
		if !unicode.IsLower(r) && !(r == '-' && i > 0) {
			return false
		}
	}
	return true
}
