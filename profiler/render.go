package profiler

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxDefaultBudget caps DefaultBudget.
const MaxDefaultBudget = 2700

// DefaultBudget is the token budget Markdown uses when given 0: 60 tokens
// plus 32 per column, at most MaxDefaultBudget.
func DefaultBudget(columns int) int { return min(MaxDefaultBudget, 60+32*columns) }

// detail is one rung of the degradation ladder.
type detail struct {
	catalog, rare int // values listed per category column
	quantiles     []int
	samples       int
	facts         bool // mean/sd/lengths/patterns
	minimal       bool // names and types only
}

// ladder is the order in which detail is cut: catalog lengths first, then
// quantiles, then samples, then secondary facts, finally everything but
// names and types.
var ladder = []detail{
	{catalog: 30, rare: 5, quantiles: []int{0, 1, 2, 3, 4}, samples: 3, facts: true},
	{catalog: 12, rare: 3, quantiles: []int{0, 1, 2, 3, 4}, samples: 3, facts: true},
	{catalog: 6, rare: 2, quantiles: []int{0, 1, 2, 3, 4}, samples: 3, facts: true},
	{catalog: 6, rare: 2, quantiles: []int{1, 2, 3}, samples: 3, facts: true},
	{catalog: 4, rare: 1, quantiles: []int{2}, samples: 3, facts: true},
	{catalog: 4, rare: 1, quantiles: nil, samples: 1, facts: true},
	{catalog: 3, rare: 1, quantiles: nil, samples: 0, facts: true},
	{catalog: 3, rare: 0, quantiles: nil, samples: 0, facts: false},
	{catalog: 0, rare: 0, quantiles: nil, samples: 0, facts: false},
	{minimal: true},
}

// Markdown renders the profile as compact markdown within budget tokens
// (cl100k_base; 0 means DefaultBudget). Every column is named with its
// type whatever the budget; when detail had to be cut the text says what.
// The output is deterministic.
func (p *TableProfile) Markdown(budget int) string {
	if budget <= 0 {
		budget = DefaultBudget(len(p.Columns))
	}
	var out string
	for i, d := range ladder {
		out = p.render(d, i)
		if Tokens(out) <= budget {
			return out
		}
	}
	return out
}

func (p *TableProfile) render(d detail, level int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", p.Name)
	meta := []string{fmt.Sprintf("%s rows × %d columns", group(p.Rows), len(p.Columns))}
	if p.Format != "" {
		f := p.Format
		if p.Encoding != "" && p.Encoding != "utf-8" {
			f += ", " + p.Encoding
		}
		meta = append(meta, f)
	}
	if len(p.CandidateKeys) > 0 {
		k := "key: " + strings.Join(p.CandidateKeys, ", ")
		if p.KeysApprox {
			k += " (est.)"
		}
		meta = append(meta, k)
	}
	dup := "duplicate rows: " + group(p.DuplicateRows)
	if p.DuplicatesLower {
		dup = "duplicate rows: ≥" + group(p.DuplicateRows)
	}
	meta = append(meta, dup)
	if len(d.quantiles) > 0 && !d.minimal {
		meta = append(meta, "q="+quantLabel(d.quantiles))
	}
	b.WriteString(strings.Join(meta, "; ") + "\n\n")
	if d.minimal {
		parts := make([]string, len(p.Columns))
		for i, c := range p.Columns {
			parts[i] = c.Name + " " + shortType(c.Type)
		}
		b.WriteString("Columns: " + strings.Join(parts, ", ") + "\n")
	} else {
		for _, c := range p.Columns {
			b.WriteString(c.line(p.Rows, d))
			b.WriteByte('\n')
		}
	}
	if d.samples > 0 && len(p.Samples) > 0 {
		b.WriteString("\nSample rows (" + strings.Join(colNames(p), " | ") + "):\n")
		for _, s := range p.Samples[:min(d.samples, len(p.Samples))] {
			cells := make([]string, len(s))
			for i, v := range s {
				cells[i] = strings.NewReplacer("\n", " ", "|", "/").Replace(v)
			}
			b.WriteString("- " + strings.Join(cells, " | ") + "\n")
		}
	}
	if len(p.Warnings) > 0 && !d.minimal {
		b.WriteString("\nWarnings: " + strings.Join(p.Warnings, "; ") + "\n")
	}
	if level > 0 {
		b.WriteString("\n_Cut for budget: " + cutNote(d) + "._\n")
	}
	return b.String()
}

func colNames(p *TableProfile) []string {
	out := make([]string, len(p.Columns))
	for i, c := range p.Columns {
		out[i] = c.Name
	}
	return out
}

func cutNote(d detail) string {
	if d.minimal {
		return "only column names and types kept (statistics, catalogs, samples dropped)"
	}
	var parts []string
	full := ladder[0]
	if d.catalog < full.catalog {
		if d.catalog == 0 {
			parts = append(parts, "no catalogs")
		} else {
			parts = append(parts, fmt.Sprintf("catalogs top %d", d.catalog))
		}
	}
	switch {
	case len(d.quantiles) == 0:
		parts = append(parts, "no quantiles")
	case len(d.quantiles) < len(full.quantiles):
		parts = append(parts, "quantiles "+quantLabel(d.quantiles))
	}
	if d.samples < full.samples {
		parts = append(parts, fmt.Sprintf("%d samples", d.samples))
	}
	if !d.facts {
		parts = append(parts, "no mean/sd/lengths/patterns")
	}
	return strings.Join(parts, "; ")
}

func quantLabel(idx []int) string {
	var s []string
	for _, i := range idx {
		s = append(s, "p"+strconv.Itoa(int(math.Round(QuantileRanks[i]*100))))
	}
	return strings.Join(s, "/")
}

func shortType(t string) string {
	switch t {
	case TypeInteger:
		return "int"
	case TypeDecimal:
		return "dec"
	case TypeBoolean:
		return "bool"
	case TypeIdentifier:
		return "id"
	case TypeCategorical:
		return "cat"
	}
	return t
}

func (c *ColumnProfile) line(rows int64, d detail) string {
	var f []string
	head := "- " + c.Name + ": " + c.Type
	if c.Format != "" {
		head += " " + c.Format
	}
	if s := c.Sensitive; s != nil {
		f = append(f, fmt.Sprintf("sensitive %s %s, values withheld", s.Class, pct(int64(math.Round(s.Share*1000)), 1000)))
	}
	if miss := c.Nulls + c.Empty; miss > 0 {
		s := "missing " + pct(miss, rows)
		if len(c.NullTokens) > 0 {
			s += " (" + strings.Join(c.NullTokens, ",") + ")"
		}
		f = append(f, s)
	}
	if c.Unique {
		f = append(f, "unique")
	} else if c.Type != TypeBoolean && c.Type != TypeEmpty {
		ds := group(c.Distinct)
		if !c.DistinctExact {
			ds = "~" + ds
		}
		f = append(f, ds+" distinct")
	}
	isInt := c.Type == TypeInteger
	if n := c.Numeric; n != nil {
		f = append(f, num(n.Min, isInt)+".."+num(n.Max, isInt))
		if d.facts {
			f = append(f, "mean "+num3(n.Mean)+" sd "+num3(n.Std))
		}
		if len(d.quantiles) > 0 && len(n.Quantiles) == len(QuantileRanks) {
			var qs []string
			for _, i := range d.quantiles {
				qs = append(qs, num(n.Quantiles[i].V, isInt))
			}
			f = append(f, "q "+strings.Join(qs, "/"))
		}
		if n.Zeros > 0 {
			f = append(f, "zeros "+pct(n.Zeros, rows))
		}
		if n.Negatives > 0 {
			f = append(f, "neg "+pct(n.Negatives, rows))
		}
	}
	if dt := c.Dates; dt != nil {
		f = append(f, dt.Min+".."+dt.Max)
		if len(d.quantiles) > 0 && len(dt.Quantiles) == len(QuantileRanks) {
			var qs []string
			for _, i := range d.quantiles {
				qs = append(qs, dt.Quantiles[i])
			}
			f = append(f, "q "+strings.Join(qs, "/"))
		}
	}
	if d.facts && c.Lengths != nil && (c.Type == TypeText || c.Type == TypeIdentifier) {
		f = append(f, fmt.Sprintf("len %d..%d", c.Lengths.Min, c.Lengths.Max))
	}
	if d.facts && len(c.Patterns) > 0 {
		f = append(f, strings.Join(c.Patterns, ", "))
	}
	if s := c.Sensitive; s != nil && d.facts {
		if len(s.Shapes) > 0 {
			f = append(f, "shapes "+shares(s.Shapes, c.Count))
		}
		if len(s.Domains) > 0 {
			f = append(f, "domains "+shares(s.Domains, c.Count))
		}
	}
	if d.catalog > 0 && len(c.Top) > 0 {
		f = append(f, c.catalogText(d))
	}
	if d.facts && len(c.Warnings) > 0 {
		f = append(f, "⚠ "+strings.Join(c.Warnings, "; "))
	}
	if len(f) == 0 {
		return head
	}
	return head + "; " + strings.Join(f, "; ")
}

func (c *ColumnProfile) catalogText(d detail) string {
	n := min(d.catalog, len(c.Top))
	var parts []string
	for _, v := range c.Top[:n] {
		parts = append(parts, vc(v))
	}
	s := strings.Join(parts, ", ")
	var more int64
	for _, v := range c.Top[n:] {
		more += v.Count
	}
	more += c.OtherCount
	restVals := len(c.Top) - n
	rare := c.Rare
	if len(rare) == 0 && c.OtherCount == 0 && n < len(c.Top) && d.rare > 0 {
		// complete catalog cut short: keep its rarest values visible
		k := min(d.rare, len(c.Top)-n)
		for _, v := range c.Top[len(c.Top)-k:] {
			more -= v.Count
		}
		rare = slices.Clone(c.Top[len(c.Top)-k:])
		slices.Reverse(rare)
	}
	if len(rare) > d.rare {
		restVals += len(rare) - d.rare
		for _, v := range rare[d.rare:] {
			more += v.Count
		}
		rare = rare[:d.rare]
	}
	if more > 0 {
		s += fmt.Sprintf(", …%d", more)
	}
	if len(rare) > 0 {
		var rp []string
		for _, v := range rare {
			rp = append(rp, vc(v))
		}
		s += "; rare: " + strings.Join(rp, ", ")
	}
	return "values " + s
}

// shares lists values with their share of n, as "a.a@a.a 60%".
func shares(vs []ValueCount, n int64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Value + " " + pct(v.Count, n)
	}
	return strings.Join(parts, ", ")
}

func vc(v ValueCount) string {
	val := v.Value
	if strings.ContainsAny(val, ",;\n") || val == "" {
		val = strconv.Quote(val)
	}
	c := strconv.FormatInt(v.Count, 10)
	if v.Approx {
		c = "~" + c
	}
	return val + " " + c
}

func pct(n, total int64) string {
	if total == 0 {
		return "0%"
	}
	p := 100 * float64(n) / float64(total)
	switch {
	case p >= 10:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	case p >= 0.1:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return group(n)
}

// group formats an integer with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// num formats a number compactly with about four significant digits.
func num(v float64, isInt bool) string {
	if isInt && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	a := math.Abs(v)
	if a != 0 && (a >= 1e7 || a < 1e-3) {
		s := strconv.FormatFloat(v, 'e', 2, 64)
		s = strings.Replace(s, "e+0", "e", 1)
		s = strings.Replace(s, "e+", "e", 1)
		s = strings.Replace(s, "e-0", "e-", 1)
		return s
	}
	if a >= 1e4 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func num3(v float64) string {
	a := math.Abs(v)
	if a >= 1e3 && a < 1e4 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	if a >= 1e4 && a < 1e7 {
		return strconv.FormatFloat(v, 'e', 2, 64)[0:4] + "e" + strconv.Itoa(int(math.Floor(math.Log10(a))))
	}
	if a >= 1e7 || a < 1e-3 || v == 0 {
		return num(v, false)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
