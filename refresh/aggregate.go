package refresh

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ViewSettings are a binding's settings for the artifact's view in an MCP
// Apps host (binding.yaml, view:).
type ViewSettings struct {
	// Aggregate is what the view shows instead of the data when the
	// view with its data exceeds the cap (refresh.max_view_bytes).
	Aggregate *Aggregate `yaml:"aggregate,omitempty" json:"aggregate,omitempty"`
}

// Aggregate functions of a Measure.
const (
	FnSum   = "sum"
	FnCount = "count"
	FnMin   = "min"
	FnMax   = "max"
	FnMean  = "mean"
)

// Fns lists the aggregate functions.
var Fns = []string{FnSum, FnCount, FnMin, FnMax, FnMean}

// Aggregate is a summary of the data, computed by selmem from the
// snapshot: one row per distinct combination of the GroupBy columns with
// each Measure, the groups ordered by the first measure, largest first.
type Aggregate struct {
	// GroupBy are the columns to group by; none gives one row.
	GroupBy []string `yaml:"group_by,omitempty" json:"group_by"`
	// Measures are the values computed per group.
	Measures []Measure `yaml:"measures" json:"measures"`
	// Limit keeps the first Limit groups (0: all).
	Limit int `yaml:"limit,omitempty" json:"limit,omitempty"`
}

// Measure is one value of an Aggregate per group: Fn of column Col (count
// without Col counts rows), named As (default the column's name, or
// "count" for a count of rows).
type Measure struct {
	Col string `yaml:"col,omitempty" json:"col,omitempty"`
	Fn  string `yaml:"fn" json:"fn"`
	As  string `yaml:"as,omitempty" json:"as,omitempty"`
}

// Name is the measure's column in the aggregate.
func (m Measure) Name() string {
	switch {
	case m.As != "":
		return m.As
	case m.Col == "":
		return "count"
	}
	return m.Col
}

const aggregateHint = "Write view: {aggregate: {group_by: [column…], measures: [{col: column, fn: sum|count|min|max|mean}], limit: N}} in binding.yaml."

// check checks the aggregate alone and, when cols is not empty, against
// the data's columns.
func (a *Aggregate) check(cols []Column) error {
	types := map[string]string{}
	var names []string
	for _, c := range cols {
		types[c.Name] = c.Type
		names = append(names, c.Name)
	}
	known := func(what, col string) error {
		if col == "" {
			return invalid(fmt.Sprintf("binding.yaml: view.aggregate has an empty %s.", what), aggregateHint)
		}
		if len(cols) > 0 && types[col] == "" {
			return invalid(fmt.Sprintf("binding.yaml: view.aggregate %s %q is not a column of the data.", what, col),
				"Columns are "+strings.Join(names, ", ")+".")
		}
		return nil
	}
	if len(a.Measures) == 0 {
		return invalid("binding.yaml: view.aggregate has no measures.", aggregateHint)
	}
	if a.Limit < 0 {
		return invalid(fmt.Sprintf("binding.yaml: view.aggregate.limit is %d.", a.Limit), "Set a positive number of groups, or leave limit out for all.")
	}
	seen := map[string]bool{}
	for _, g := range a.GroupBy {
		if err := known("group_by column", g); err != nil {
			return err
		}
		if seen[g] {
			return invalid(fmt.Sprintf("binding.yaml: view.aggregate groups by %q twice.", g), aggregateHint)
		}
		seen[g] = true
	}
	for _, m := range a.Measures {
		if !slices.Contains(Fns, m.Fn) {
			return invalid(fmt.Sprintf("binding.yaml: view.aggregate measure function %q is unknown.", m.Fn), "Functions are "+strings.Join(Fns, ", ")+".")
		}
		if m.Col != "" || m.Fn != FnCount {
			if err := known("measure column", m.Col); err != nil {
				return err
			}
		}
		if t := types[m.Col]; (m.Fn == FnSum || m.Fn == FnMean) && len(cols) > 0 && t != TypeInteger && t != TypeNumber {
			return invalid(fmt.Sprintf("binding.yaml: view.aggregate cannot %s column %q of type %s.", m.Fn, m.Col, t),
				"sum and mean take integer or number columns; count, min and max take any.")
		}
		if seen[m.Name()] {
			return invalid(fmt.Sprintf("binding.yaml: view.aggregate has two columns named %q.", m.Name()), "Name measures with as, e.g. {col: amount, fn: mean, as: mean_amount}.")
		}
		seen[m.Name()] = true
	}
	return nil
}

// Describe says in words what the aggregate shows, e.g. "sum of amount by
// region".
func (a *Aggregate) Describe() string {
	var ms []string
	for _, m := range a.Measures {
		if m.Col == "" {
			ms = append(ms, "count of rows")
		} else {
			ms = append(ms, m.Fn+" of "+m.Col)
		}
	}
	s := strings.Join(ms, ", ")
	if len(a.GroupBy) > 0 {
		s += " by " + strings.Join(a.GroupBy, ", ")
	}
	return s
}

// AggregateInfo describes an aggregate a view shows instead of the data.
type AggregateInfo struct {
	Aggregate
	// OfRows is how many rows of data the aggregate summarises.
	OfRows int64 `json:"of_rows"`
	// Groups is how many groups there are; the frame holds at most Limit.
	Groups int `json:"groups"`
}

// group is one group's key and accumulators.
type group struct {
	key  []string
	null []bool
	acc  []accumulator
}

type accumulator struct {
	n        int64
	sum      float64
	isum     int64
	intOnly  bool
	min, max string
	minF     float64
	maxF     float64
}

// Apply computes the aggregate of f, checking it against f's columns.
func (a *Aggregate) Apply(f *Frame) (*Frame, AggregateInfo, error) {
	info := AggregateInfo{Aggregate: *a, OfRows: f.Rows}
	if err := a.check(f.Columns); err != nil {
		return nil, info, err
	}
	index := map[string]int{}
	for i, c := range f.Columns {
		index[c.Name] = i
	}
	keyCols := make([]int, len(a.GroupBy))
	for i, g := range a.GroupBy {
		keyCols[i] = index[g]
	}
	groups := map[string]*group{}
	var order []*group
	var kb strings.Builder
	for r := 0; r < int(f.Rows); r++ {
		kb.Reset()
		for _, c := range keyCols {
			if f.Null[c][r] {
				kb.WriteString("\x00n")
			} else {
				kb.WriteString("\x00v")
				kb.WriteString(f.Values[c][r])
			}
		}
		g, ok := groups[kb.String()]
		if !ok {
			g = &group{acc: make([]accumulator, len(a.Measures))}
			for _, c := range keyCols {
				g.key = append(g.key, f.Values[c][r])
				g.null = append(g.null, f.Null[c][r])
			}
			for i := range g.acc {
				g.acc[i].intOnly = true
			}
			groups[kb.String()] = g
			order = append(order, g)
		}
		for i, m := range a.Measures {
			acc := &g.acc[i]
			if m.Col == "" {
				acc.n++
				continue
			}
			c := index[m.Col]
			if f.Null[c][r] {
				continue
			}
			acc.add(f.Values[c][r], f.Columns[c].Type, m.Fn)
		}
	}

	out := &Frame{}
	for _, g := range a.GroupBy {
		out.Columns = append(out.Columns, f.Columns[index[g]])
	}
	for _, m := range a.Measures {
		out.Columns = append(out.Columns, Column{Name: m.Name(), Type: measureType(m, f.Columns, index)})
	}
	type row struct {
		vals []string
		null []bool
		rank float64
		key  string
	}
	rows := make([]row, 0, len(order))
	for _, g := range order {
		rw := row{vals: slices.Clone(g.key), null: slices.Clone(g.null), key: strings.Join(g.key, "\x00")}
		for i, m := range a.Measures {
			v, null, rank := g.acc[i].result(m, out.Columns[len(a.GroupBy)+i].Type)
			rw.vals, rw.null = append(rw.vals, v), append(rw.null, null)
			if i == 0 {
				rw.rank = rank
			}
		}
		rows = append(rows, rw)
	}
	slices.SortStableFunc(rows, func(x, y row) int {
		if c := cmp.Compare(y.rank, x.rank); c != 0 {
			return c
		}
		return strings.Compare(x.key, y.key)
	})
	info.Groups = len(rows)
	if a.Limit > 0 && len(rows) > a.Limit {
		rows = rows[:a.Limit]
	}
	out.Rows = int64(len(rows))
	out.Values = make([][]string, len(out.Columns))
	out.Null = make([][]bool, len(out.Columns))
	for _, rw := range rows {
		for c := range out.Columns {
			out.Values[c] = append(out.Values[c], rw.vals[c])
			out.Null[c] = append(out.Null[c], rw.null[c])
		}
	}
	return out, info, nil
}

func (acc *accumulator) add(s, typ, fn string) {
	acc.n++
	switch fn {
	case FnCount:
		return
	case FnMin, FnMax:
		if typ == TypeInteger || typ == TypeNumber {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				acc.n--
				return
			}
			if acc.n == 1 || f < acc.minF {
				acc.minF, acc.min = f, s
			}
			if acc.n == 1 || f > acc.maxF {
				acc.maxF, acc.max = f, s
			}
			return
		}
		if acc.n == 1 || s < acc.min {
			acc.min = s
		}
		if acc.n == 1 || s > acc.max {
			acc.max = s
		}
		return
	}
	if typ == TypeInteger && acc.intOnly {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil && !addOverflows(acc.isum, i) {
			acc.isum += i
			acc.sum += float64(i)
			return
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		acc.n--
		return
	}
	acc.intOnly = false
	acc.sum += f
}

func addOverflows(a, b int64) bool {
	s := a + b
	return (b > 0 && s < a) || (b < 0 && s > a)
}

// result is the measure's value as text, whether it is null, and the
// number that orders groups by it.
func (acc *accumulator) result(m Measure, typ string) (string, bool, float64) {
	switch m.Fn {
	case FnCount:
		return strconv.FormatInt(acc.n, 10), false, float64(acc.n)
	case FnSum:
		if typ == TypeInteger && acc.intOnly {
			return strconv.FormatInt(acc.isum, 10), false, acc.sum
		}
		return formatFloat(acc.sum), false, acc.sum
	case FnMean:
		if acc.n == 0 {
			return "", true, math.Inf(-1)
		}
		v := acc.sum / float64(acc.n)
		return formatFloat(v), false, v
	}
	if acc.n == 0 {
		return "", true, math.Inf(-1)
	}
	v, f := acc.min, acc.minF
	if m.Fn == FnMax {
		v, f = acc.max, acc.maxF
	}
	return v, false, f
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// measureType is the type of a measure's column in the aggregate.
func measureType(m Measure, cols []Column, index map[string]int) string {
	switch m.Fn {
	case FnCount:
		return TypeInteger
	case FnMean:
		return TypeNumber
	}
	t := cols[index[m.Col]].Type
	if m.Fn == FnSum && t != TypeInteger {
		return TypeNumber
	}
	return t
}

// aggregateJSON is the member "aggregate" a view's data carries when it
// is an aggregate.
func aggregateJSON(info AggregateInfo) []byte {
	b, err := json.Marshal(info)
	if err != nil {
		panic(err) // plain fields always encode
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
