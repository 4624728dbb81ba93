package profiler

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A rendering is planned per column. Every column first gets its
// essentials (name, type, missing, distinct); the rest of the budget goes,
// tier by tier and column by column, to what an agent most needs:
//
//	tier 1: complete catalogs of up to fullCatalog values, numeric, date
//	        and code ranges, placeholders, warnings
//	tier 2: top values of longer catalogs, mean and sd, quantiles
//	tier 3: lengths, patterns, zeros and negatives
//	tier 4: sample rows
//
// At the default budget tier 1 is never cut: the budget grows to hold it.
const (
	fullCatalog = 20
	noteReserve = 30 // tokens kept for the "cut for budget" note
	displayLen  = 40 // values longer than this are shortened for display
)

// spendOrder is the order in which the facts of one tier get budget.
var spendOrder = []string{"catalogs", "counts", "ranges", "placeholders", "warnings", "spaces",
	"top values", "mean/sd", "quantiles", "lengths/patterns", "zeros/negatives", "shapes"}

// item is one fact of a column line with its renderings, most detailed
// first; pick is the rendering used, -1 none.
type item struct {
	tier int
	what string // named in the cut note
	alts []string
	// altTier, when set, is the tier from which each rendering may be
	// used (a complete catalog: its values at tier 1, with counts at 2).
	altTier []int
	short   []bool // the rendering shows a shortened value
	pick    int
}

// tierOf is the tier at which rendering i may be used.
func (it *item) tierOf(i int) int {
	if it.altTier != nil {
		return it.altTier[i]
	}
	return it.tier
}

func (pl *colPlan) shortened() bool {
	for _, it := range pl.items {
		if it.pick >= 0 && it.short != nil && it.short[it.pick] {
			return true
		}
	}
	return false
}

type colPlan struct {
	head  string
	items []*item
	cost  int
}

func (cp *colPlan) line() string {
	var b strings.Builder
	b.WriteString(cp.head)
	for _, it := range cp.items {
		if it.pick >= 0 {
			b.WriteString("; ")
			b.WriteString(it.alts[it.pick])
		}
	}
	return b.String()
}

// Markdown renders the profile as compact markdown within budget tokens
// (cl100k_base; 0 means DefaultBudget, stretched as needed so that every
// complete catalog of up to 20 values, every range and every warning is
// shown). Every column is named with its type whatever the budget; when
// detail had to be cut the text says what. The output is deterministic.
func (p *TableProfile) Markdown(budget int) string {
	protect := budget <= 0
	if protect {
		budget = DefaultBudget(len(p.Columns))
	}
	lead := p.textLead()
	plans := make([]*colPlan, len(p.Columns))
	for i, c := range p.Columns {
		plans[i] = c.plan(p.Rows, lead)
	}
	// The search below counts the same lines again and again.
	counted := map[string]int{}
	tokens := func(s string) int {
		n, ok := counted[s]
		if !ok {
			n = Tokens(s)
			counted[s] = n
		}
		return n
	}
	fixed := tokens(p.header(plans)) + tokens(p.footer(0, plans, false)) + 2
	total := fixed
	for _, pl := range plans {
		pl.cost = tokens(pl.line()) + 1
		total += pl.cost
	}
	if total > budget && !protect {
		return p.minimal()
	}
	try := func(pl *colPlan, it *item, alt, limit int) bool {
		old := it.pick
		it.pick = alt
		c := tokens(pl.line()) + 1
		if total-pl.cost+c <= limit {
			total += c - pl.cost
			pl.cost = c
			return true
		}
		it.pick = old
		return false
	}
	// Each tier is spent in rounds: every fact first gets its smallest
	// rendering, then each round upgrades every fact one step, so one
	// column's long catalog cannot starve the others.
	for tier := 1; tier <= 3; tier++ {
		limit := budget - noteReserve
		if tier == 1 && protect {
			limit = math.MaxInt
		}
		for _, what := range spendOrder {
			for changed := true; changed; {
				changed = false
				for _, pl := range plans {
					for _, it := range pl.items {
						if it.pick == 0 || it.what != what {
							continue
						}
						next := len(it.alts) - 1
						if it.pick > 0 {
							next = it.pick - 1
						}
						if it.tierOf(next) == tier && try(pl, it, next, limit) {
							changed = true
						}
					}
				}
			}
		}
	}
	cut := false
	for _, pl := range plans {
		for _, it := range pl.items {
			cut = cut || it.pick != 0
		}
	}
	if protect {
		budget = max(budget, total+noteReserve)
	}
	samples := 0
	for n := min(3, len(p.Samples)); n > 0; n-- {
		if total+tokens(p.sampleBlock(n)) <= budget-noteReserve {
			samples = n
			break
		}
	}
	if samples < min(3, len(p.Samples)) {
		cut = true
	}
	out := p.assemble(plans, samples, cut)
	// token counts of lines do not quite add up: trim until the whole fits
	n := Tokens(out)
	for n > budget {
		if samples > 0 {
			samples--
		} else if !dropLast(plans, protect) {
			break
		}
		cut = true
		out = p.assemble(plans, samples, cut)
		n = Tokens(out)
	}
	if !protect && n > budget {
		return p.minimal()
	}
	return out
}

// dropLast removes the least important fact shown (never one of tier 1
// when keep1).
func dropLast(plans []*colPlan, keep1 bool) bool {
	low := 1
	if keep1 {
		low = 2
	}
	for tier := 3; tier >= low; tier-- {
		for i := len(plans) - 1; i >= 0; i-- {
			for j := len(plans[i].items) - 1; j >= 0; j-- {
				it := plans[i].items[j]
				if it.pick >= 0 && it.tierOf(it.pick) == tier && (it.pick+1 < len(it.alts) || it.tierOf(len(it.alts)-1) >= low) {
					if it.pick+1 < len(it.alts) {
						it.pick++
					} else {
						it.pick = -1
					}
					return true
				}
			}
		}
	}
	return false
}

func (p *TableProfile) assemble(plans []*colPlan, samples int, cut bool) string {
	var b strings.Builder
	b.WriteString(p.header(plans))
	for _, pl := range plans {
		b.WriteString(pl.line())
		b.WriteByte('\n')
	}
	b.WriteString(p.footer(samples, plans, cut))
	return b.String()
}

func (p *TableProfile) header(plans []*colPlan) string {
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
	if len(p.CompositeKeys) > 0 {
		var ks []string
		for _, ck := range p.CompositeKeys {
			ks = append(ks, strings.Join(ck, " + "))
		}
		k := "composite key: " + strings.Join(ks, " or ")
		if p.CompositeKeysApprox {
			k += " (est.)"
		}
		meta = append(meta, k)
	}
	if lead := p.textLead(); lead != "" {
		meta = append(meta, "every text value starts with "+strconv.Quote(lead)+" (catalogs omit it)")
	}
	dup := "duplicate rows: " + group(p.DuplicateRows)
	if p.DuplicatesLower {
		dup = "duplicate rows: ≥" + group(p.DuplicateRows)
	}
	meta = append(meta, dup)
	for _, pl := range plans {
		if pl.shows("quantiles") {
			meta = append(meta, "q=p5/p25/p50/p75/p95")
			break
		}
	}
	b.WriteString(strings.Join(meta, "; ") + "\n\n")
	return b.String()
}

func (pl *colPlan) shows(what string) bool {
	for _, it := range pl.items {
		if it.what == what && it.pick >= 0 {
			return true
		}
	}
	return false
}

func (p *TableProfile) footer(samples int, plans []*colPlan, cut bool) string {
	var b strings.Builder
	if samples > 0 {
		b.WriteString(p.sampleBlock(samples))
	}
	for _, pl := range plans {
		if pl.shortened() {
			b.WriteString("\nA quoted value with … is shortened: its start and end are kept.\n")
			break
		}
	}
	if len(p.Warnings) > 0 {
		b.WriteString("\nWarnings: " + strings.Join(p.Warnings, "; ") + "\n")
	}
	if cut {
		b.WriteString("\n_Cut for budget: " + cutNote(plans, samples, len(p.Samples)) + "._\n")
	}
	return b.String()
}

func (p *TableProfile) sampleBlock(n int) string {
	var b strings.Builder
	b.WriteString("\nSample rows (" + strings.Join(colNames(p), " | ") + "):\n")
	for _, s := range p.Samples[:min(n, len(p.Samples))] {
		cells := make([]string, len(s))
		for i, v := range s {
			cells[i] = strings.NewReplacer("\n", " ", "|", "/").Replace(v)
		}
		b.WriteString("- " + strings.Join(cells, " | ") + "\n")
	}
	return b.String()
}

// minimal lists only names and types, for budgets below the essentials.
func (p *TableProfile) minimal() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n%s rows × %d columns\n\n", p.Name, group(p.Rows), len(p.Columns))
	parts := make([]string, len(p.Columns))
	for i, c := range p.Columns {
		parts[i] = c.Name + " " + shortType(c.Type)
	}
	b.WriteString("Columns: " + strings.Join(parts, ", ") + "\n")
	b.WriteString("\n_Cut for budget: only column names and types kept (statistics, catalogs, samples dropped)._\n")
	return b.String()
}

func colNames(p *TableProfile) []string {
	out := make([]string, len(p.Columns))
	for i, c := range p.Columns {
		out[i] = c.Name
	}
	return out
}

// cutNote says which kinds of facts were left out or shortened.
func cutNote(plans []*colPlan, samples, have int) string {
	var parts []string
	seen := map[string]bool{}
	for _, pl := range plans {
		for _, it := range pl.items {
			if it.pick != 0 && !seen[it.what] {
				seen[it.what] = true
				parts = append(parts, it.what)
			}
		}
	}
	if samples < min(3, have) {
		parts = append(parts, "sample rows")
	}
	return strings.Join(parts, "; ")
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

// plan builds the column's head (its essentials) and its other facts.
func (c *ColumnProfile) plan(rows int64, tableLead string) *colPlan {
	var ess []string
	head := "- " + c.Name + ": " + c.Type
	if c.Format != "" {
		head += " " + c.Format
	}
	if c.Unit != "" {
		head += " in " + c.Unit
	}
	if s := c.Sensitive; s != nil {
		ess = append(ess, fmt.Sprintf("sensitive %s %s, values withheld", s.Class, pct(int64(math.Round(s.Share*1000)), 1000)))
	}
	if miss := c.Nulls + c.Empty; miss > 0 {
		s := "missing " + pct(miss, rows)
		if len(c.NullTokens) > 0 {
			s += " (" + strings.Join(c.NullTokens, ",") + ")"
		}
		ess = append(ess, s)
	}
	if c.Unique {
		ess = append(ess, "unique")
	} else if c.Type != TypeBoolean && c.Type != TypeEmpty {
		ds := group(c.Distinct)
		if !c.DistinctExact {
			ds = "~" + ds
		}
		ds += " distinct"
		if c.Count > 20 && c.Distinct*10 >= c.Count*9 && c.Numeric == nil && c.Dates == nil {
			ds += " (near-unique)"
		}
		ess = append(ess, ds)
	}
	if len(ess) > 0 {
		head += "; " + strings.Join(ess, "; ")
	}
	pl := &colPlan{head: head}
	add := func(tier int, what string, alts ...string) {
		if len(alts) > 0 && alts[0] != "" {
			pl.items = append(pl.items, &item{tier: tier, what: what, alts: alts, pick: -1})
		}
	}
	isInt := c.Type == TypeInteger
	if n := c.Numeric; n != nil {
		r := num(n.Min, isInt) + ".." + num(n.Max, isInt)
		if everyInteger(c) {
			r = "every integer " + r
		}
		add(1, "ranges", r)
		add(2, "mean/sd", "mean "+mean3(n.Mean)+" sd "+mean3(n.Std))
		if len(n.Quantiles) == len(QuantileRanks) {
			qs := make([]string, len(n.Quantiles))
			for i, q := range n.Quantiles {
				qs[i] = num(q.V, isInt)
			}
			add(2, "quantiles", "q "+strings.Join(qs, "/"))
		}
		var zn []string
		if n.Zeros > 0 {
			zn = append(zn, "zeros "+pct(n.Zeros, rows))
		}
		if n.Negatives > 0 {
			zn = append(zn, "neg "+pct(n.Negatives, rows))
		}
		add(3, "zeros/negatives", strings.Join(zn, "; "))
	}
	if len(c.Range) == 2 {
		r := "range " + c.Range[0] + ".." + c.Range[1]
		if everyInteger(c) {
			r = "every integer " + c.Range[0] + ".." + c.Range[1]
		}
		add(1, "ranges", r)
	}
	if dt := c.Dates; dt != nil {
		add(1, "ranges", dt.Min+".."+dt.Max)
		if len(dt.Quantiles) == len(QuantileRanks) {
			add(2, "quantiles", "q "+strings.Join(dt.Quantiles, "/"))
		}
	}
	var lp []string
	if c.Lengths != nil && (c.Type == TypeText || c.Type == TypeIdentifier) {
		lp = append(lp, fmt.Sprintf("len %d..%d", c.Lengths.Min, c.Lengths.Max))
	}
	if len(c.Patterns) > 0 {
		lp = append(lp, strings.Join(c.Patterns, ", "))
	}
	add(3, "lengths/patterns", strings.Join(lp, "; "))
	if s := c.Sensitive; s != nil {
		var sh []string
		if len(s.Shapes) > 0 {
			sh = append(sh, "shapes "+shares(s.Shapes, c.Count))
		}
		if len(s.Domains) > 0 {
			sh = append(sh, "domains "+shares(s.Domains, c.Count))
		}
		add(3, "shapes", strings.Join(sh, "; "))
	}
	// complete: the listed values cover every row, with exact counts
	complete := c.OtherCount == 0 && len(c.Rare) == 0 && countOf(c.Top) == c.Count &&
		!slices.ContainsFunc(c.Top, func(v ValueCount) bool { return v.Approx })
	factored := false
	if len(c.Top) > 0 {
		if complete && len(c.Top) <= fullCatalog {
			s, f, sh := catalogText(tableLead, c.Top, len(c.Top), nil, 0, 0, true)
			switch {
			case everyInteger(c) && c.Unique:
				// the range says it all
			case everyInteger(c):
				// the range names the values; counts are a tier-2 extra
				add(2, "counts", s)
				pl.items[len(pl.items)-1].short = []bool{sh}
			case c.Unique:
				v, _, vsh := valuesOnly(tableLead, c.Top)
				add(1, "catalogs", v)
				pl.items[len(pl.items)-1].short = []bool{vsh}
			default:
				v, _, vsh := valuesOnly(tableLead, c.Top)
				add(1, "counts", s, v)
				it := pl.items[len(pl.items)-1]
				it.short, it.altTier = []bool{sh, vsh}, []int{2, 1}
			}
			factored = f
		} else {
			var alts []string
			var short []bool
			for _, n := range []int{catalogMax, 12, 6, 3} {
				if n > len(c.Top) && n != catalogMax {
					continue
				}
				rare := c.Rare[:min(len(c.Rare), n/3)]
				s, f, sh := catalogText(tableLead, c.Top, n, rare, c.OtherCount+countOf(c.Rare[len(rare):]), c.Distinct, c.DistinctExact)
				if n == catalogMax {
					factored = f
				}
				alts, short = append(alts, s), append(short, sh)
			}
			add(2, "top values", alts...)
			pl.items[len(pl.items)-1].short = short
		}
	}
	if c.Padded > 0 && !factored && c.Numeric == nil && c.Dates == nil && !(tableLead != "" && c.Padded == c.Count) {
		add(1, "spaces", "surrounding spaces "+pct(c.Padded, rows))
	}
	if len(c.Placeholders) > 0 {
		parts := make([]string, len(c.Placeholders))
		for i, v := range c.Placeholders {
			val := v.Value
			if c.Numeric != nil || len(c.Range) > 0 {
				val = trimSpace(val)
			}
			parts[i] = showValue(val) + " " + countText(v)
		}
		add(1, "placeholders", "placeholders "+strings.Join(parts, ", "))
	}
	if len(c.Warnings) > 0 {
		add(1, "warnings", "⚠ "+strings.Join(c.Warnings, "; "))
	}
	return pl
}

// catalogText renders up to n values of top with their counts, then the
// rest: for an exact catalog how many more values in how many rows, and
// the rare values. It reports whether a common leading space was
// factored out ("values (each after a space): ...").
func catalogText(tableLead string, top []ValueCount, n int, rare []ValueCount, other, distinct int64, exact bool) (text string, factored, shortened bool) {
	n = min(n, len(top))
	shown := append(top[:n:n], rare...)
	lead := commonLead(shown)
	disp, shortened := displayValues(shown, len(lead))
	var b strings.Builder
	if n == len(top) && len(rare) == 0 && other == 0 {
		b.WriteString("values")
	} else {
		b.WriteString("top")
	}
	if lead != "" && lead != tableLead {
		fmt.Fprintf(&b, " (each after %s)", strconv.Quote(lead))
	}
	b.WriteByte(' ')
	for i, v := range top[:n] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(disp[i] + " " + countText(v))
	}
	var moreRows int64
	approx := false
	for _, v := range top[n:] {
		moreRows += v.Count
		approx = approx || v.Approx
	}
	moreRows += other
	moreVals := distinct
	for _, v := range shown {
		moreVals -= int64(max(v.values, 1))
	}
	if moreVals > 0 {
		switch {
		case !exact:
			fmt.Fprintf(&b, "; +~%d more values", moreVals)
		case approx:
			fmt.Fprintf(&b, "; +%d more values", moreVals)
		default:
			fmt.Fprintf(&b, "; +%d more values in %d rows", moreVals, moreRows)
		}
	}
	if len(rare) > 0 {
		b.WriteString("; rare ")
		if lead != "" && lead != tableLead {
			fmt.Fprintf(&b, "(each after %s) ", strconv.Quote(lead))
		}
		for i, v := range rare {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(disp[n+i] + " " + countText(v))
		}
	}
	return b.String(), lead != "", shortened
}

// countText is an exact count, or the guaranteed range of a sketched one.
func countText(v ValueCount) string {
	if v.Approx && v.Min != v.Count {
		return strconv.FormatInt(v.Min, 10) + "–" + strconv.FormatInt(v.Count, 10)
	}
	return strconv.FormatInt(v.Count, 10)
}

// commonLead is the whitespace every value starts with when all have the
// same (and none ends with whitespace), else "".
func commonLead(vs []ValueCount) string {
	if len(vs) == 0 {
		return ""
	}
	lead := ""
	for i, v := range vs {
		t := strings.TrimLeft(v.Value, " \t")
		l := v.Value[:len(v.Value)-len(t)]
		if l == "" || t == "" || strings.TrimRight(t, " \t") != t {
			return ""
		}
		if i == 0 {
			lead = l
		} else if l != lead {
			return ""
		}
	}
	return lead
}

// displayValues renders values for a catalog: exact spellings, quoted
// when they hold separators, quotes or surrounding spaces; values longer
// than displayLen keep a start and an end long enough to tell them apart.
func displayValues(vs []ValueCount, strip int) (out []string, shortened bool) {
	raw := make([]string, len(vs))
	for i, v := range vs {
		raw[i] = v.Value[strip:]
	}
	short := make([]string, len(vs))
	head, tail := 26, 12
	for range 12 {
		seen := map[string]int{}
		for i, r := range raw {
			short[i] = shorten(r, head, tail)
			seen[short[i]]++
		}
		clash := false
		for i, r := range raw {
			if seen[short[i]] > 1 && short[i] != r {
				clash = true
			}
		}
		if !clash {
			break
		}
		head, tail = head+12, tail+6
	}
	out = make([]string, len(vs))
	for i, s := range short {
		out[i] = showValue(s)
		if vs[i].Shortened || s != raw[i] {
			out[i] = strconv.Quote(s)
			shortened = true
		}
	}
	return out, shortened
}

// shorten keeps the first head and last tail characters of a value
// longer than displayLen.
func shorten(s string, head, tail int) string {
	n := utf8.RuneCountInString(s)
	if n <= displayLen || head+tail+1 >= n {
		return s
	}
	r := []rune(s)
	return string(r[:head]) + "…" + string(r[n-tail:])
}

// showValue quotes a value that holds a catalog separator, a quote, a
// digit-only end that could be read as a count, or surrounding spaces.
func showValue(v string) string {
	if v == "" || strings.ContainsAny(v, ",;\n\"…") || strings.TrimSpace(v) != v {
		return strconv.Quote(v)
	}
	return v
}

func countOf(vs []ValueCount) int64 {
	var n int64
	for _, v := range vs {
		n += v.Count
	}
	return n
}

// everyInteger reports an integer or code column whose distinct values
// are every integer of its range, so the range is its complete catalog.
func everyInteger(c *ColumnProfile) bool {
	lo, hi, ok := intRange(c)
	return ok && c.DistinctExact && c.Distinct > 2 && c.Distinct == hi-lo+1
}

func intRange(c *ColumnProfile) (lo, hi int64, ok bool) {
	switch {
	case c.Type == TypeInteger && c.Numeric != nil:
		return int64(c.Numeric.Min), int64(c.Numeric.Max), true
	case c.Type == TypeCode && len(c.Range) == 2:
		a, err1 := strconv.ParseInt(c.Range[0], 10, 64)
		b, err2 := strconv.ParseInt(c.Range[1], 10, 64)
		return a, b, err1 == nil && err2 == nil
	}
	return 0, 0, false
}

// valuesOnly renders a complete catalog without counts, most frequent
// first: "values: a, b" or "values (each after " "): a, b".
func valuesOnly(tableLead string, top []ValueCount) (string, bool, bool) {
	lead := commonLead(top)
	disp, shortened := displayValues(top, len(lead))
	s := "values"
	if lead != "" && lead != tableLead {
		s += " (each after " + strconv.Quote(lead) + ")"
	}
	return s + ": " + strings.Join(disp, ", "), lead != "", shortened
}

// textLead is the whitespace every value of every text-like column
// starts with (as in a CSV written with ", " between fields), so
// catalogs can say it once for the table; "" when columns differ.
func (p *TableProfile) textLead() string {
	lead := ""
	for _, c := range p.Columns {
		switch c.Type {
		case TypeCategorical, TypeText, TypeIdentifier, TypeCode, TypeBoolean:
		default:
			continue
		}
		if c.Count == 0 || c.Sensitive != nil {
			continue
		}
		if c.Padded != c.Count || len(c.Top) == 0 {
			return ""
		}
		l := commonLead(c.Top)
		if l == "" || lead != "" && l != lead {
			return ""
		}
		lead = l
	}
	return lead
}
