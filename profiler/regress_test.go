package profiler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Regression tests for the findings of issue 13, one per finding.

// mdLine returns the rendered line of column name.
func mdLine(t *testing.T, md, name string) string {
	t.Helper()
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "- "+name+": ") {
			return l
		}
	}
	t.Fatalf("no line for %s in:\n%s", name, md)
	return ""
}

// Finding 1: means printed 10× too small (99,963 as 1.00e4).
func TestRender_SignificantDigits(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		n    int
		want string
	}{
		{99963, 3, "99963"}, {999733, 3, "999733"}, {-12345, 3, "-12345"}, {9999.6, 3, "10000"},
		{1.21e12, 3, "1.21e12"}, {-1.2345e13, 3, "-1.23e13"}, {0.000123456, 3, "1.23e-4"}, {0.00123, 3, "0.00123"},
		{2.5, 3, "2.5"}, {17.74, 3, "17.7"}, {1234567.5, 3, "1234568"}, {99999999, 3, "1e8"}, {0, 3, "0"},
		{11502.6309, 6, "11502.6"}, {105435000000000, 6, "1.05435e14"},
	} {
		if got := sig(tc.v, tc.n); got != tc.want {
			t.Errorf("sig(%v, %d) = %s, want %s", tc.v, tc.n, got, tc.want)
		}
	}
	md := profileFile(t, "testdata/csv/edge-numbers.csv").Markdown(100000)
	for col, want := range map[string]string{"a": "mean 99963 sd 0", "b": "mean 999733 sd 0", "c": "mean -12345 sd 0",
		"d": "1.23456e-4..1.23456e-4", "e": "mean 1234568 sd 0"} {
		if l := mdLine(t, md, col); !strings.Contains(l, want) {
			t.Errorf("%s: %q lacks %q", col, l, want)
		}
	}
}

// Finding 2: timestamps with AM/PM were typed text with no range.
func TestDates_AMPM(t *testing.T) {
	tp := profileFile(t, "testdata/csv/edge-dates.csv")
	c := col(tp, "stamp")
	if got, want := c.Type+" "+c.Format, TypeDateTime+" MM/DD/YYYY hh:mm:ss AM"; got != want {
		t.Fatalf("stamp = %s, want %s", got, want)
	}
	if got, want := c.Dates.Min+".."+c.Dates.Max, "2022-12-31 13:00:00..2023-03-01 00:05:10"; got != want {
		t.Errorf("stamp range %s, want %s", got, want)
	}
	tp = profileFile(t, writeTemp(t, "nyc.csv", genNYC311(2000)))
	for _, name := range []string{"Created Date", "Closed Date", "Due Date", "Resolution Action Updated Date"} {
		if c := col(tp, name); c.Type != TypeDateTime || c.Format != "MM/DD/YYYY hh:mm:ss AM" || len(c.Warnings) > 0 {
			t.Errorf("%s: %s %q %v", name, c.Type, c.Format, c.Warnings)
		}
	}
}

// Finding 3: a column's values were parsed with whichever layout last
// worked, so 05-01-2011 … 25-01-2011 gave the range 2011-01-07..2011-06-01.
func TestDates_OneLayoutPerColumn(t *testing.T) {
	tp := profileFile(t, "testdata/csv/edge-dates.csv")
	c := col(tp, "dmy")
	if got, want := c.Format+" "+c.Dates.Min+".."+c.Dates.Max, "DD-MM-YYYY 2011-01-05..2011-01-25"; got != want {
		t.Errorf("dmy = %s, want %s", got, want)
	}
	if len(c.Warnings) > 0 {
		t.Errorf("dmy warnings %v", c.Warnings)
	}
	m := col(tp, "mixed")
	if got, want := strings.Join(m.Warnings, "; "), `1 values do not parse as YYYY-MM-DD (e.g. "01/07/2024")`; got != want {
		t.Errorf("mixed warnings %q, want %q", got, want)
	}
	if got, want := m.Dates.Min+".."+m.Dates.Max, "2024-01-05..2024-01-08"; got != want {
		t.Errorf("mixed range %s, want %s", got, want)
	}
	a := col(tp, "amb")
	if a.Format != "MM/DD/YYYY" || !slices.ContainsFunc(a.Warnings, func(w string) bool { return strings.Contains(w, "ambiguous") }) {
		t.Errorf("amb: %q %v, want MM/DD/YYYY flagged ambiguous", a.Format, a.Warnings)
	}
}

// lowCardinality returns the columns whose complete catalog must show:
// at most 20 distinct values, counted exactly, not withheld.
func lowCardinality(tp *TableProfile) []*ColumnProfile {
	var out []*ColumnProfile
	for _, c := range tp.Columns {
		if c.DistinctExact && c.Distinct <= fullCatalog && c.Sensitive == nil {
			out = append(out, c)
		}
	}
	return out
}

// Finding 4: budget cuts applied to all columns at once, so a 46-column
// table's default profile had no catalog at all.
func TestMarkdown_WideKeepsCatalogs(t *testing.T) {
	tables := map[string]*TableProfile{
		"nyc311":     profileFile(t, writeTemp(t, "nyc.csv", genNYC311(5000))),
		"wide60":     profileFile(t, wideTable(t, 60, 3000)),
		"superstore": profileFile(t, writeTemp(t, "store.csv", genSuperstore(5000, false))),
	}
	for name, tp := range tables {
		md := tp.Markdown(0)
		low := lowCardinality(tp)
		if len(low) < 5 {
			t.Errorf("%s: only %d low-cardinality columns; the test needs more", name, len(low))
		}
		for _, c := range low {
			l := mdLine(t, md, c.Name)
			if everyInteger(c) && strings.Contains(l, "; every integer ") {
				continue
			}
			var cat string
			for _, f := range splitOutside(l, "; ") {
				if strings.HasPrefix(f, "values") {
					cat = f
				}
			}
			if cat == "" {
				t.Errorf("%s: %s has no complete catalog: %s", name, c.Name, l)
				continue
			}
			var vals []string
			if body, ok := strings.CutPrefix(cat, "values: "); ok {
				vals = splitOutside(body, ", ")
			} else {
				vals, _ = catalogItems(strings.TrimPrefix(cat, "values "), "")
			}
			if len(vals) != len(c.Top) {
				t.Errorf("%s: %s lists %d of %d values: %s", name, c.Name, len(vals), len(c.Top), cat)
			}
		}
		// explicit budgets hold, and more budget never shows less
		prev := 0
		for _, b := range []int{400, 800, 1200, 1600, 2400, 4000} {
			md := tp.Markdown(b)
			n := Tokens(md)
			if n > b {
				t.Errorf("%s: %d tokens at budget %d", name, n, b)
			}
			if n < prev {
				t.Errorf("%s: %d tokens at budget %d, fewer than %d below", name, n, b, prev)
			}
			prev = n
			for _, c := range tp.Columns {
				if !strings.Contains(md, c.Name) {
					t.Errorf("%s: budget %d lost column %s", name, b, c.Name)
				}
			}
		}
	}
}

// TestMarkdown_SizeTargets holds the default-budget sizes of the issue's
// four tables: the two public ones and look-alikes of the other two.
func TestMarkdown_SizeTargets(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		cols, max  int
	}{
		{"worldbank_gdp", "testdata/datasets/worldbank_gdp.csv.gz", 4, 200},
		{"uci_adult", "testdata/datasets/uci_adult.csv.gz", 15, 550},
		{"superstore", writeTemp(t, "store.csv", genSuperstore(30000, false)), 24, 950},
		{"nyc311", writeTemp(t, "nyc.csv", genNYC311(10000)), 46, 2000},
	} {
		tp := profileFile(t, tc.path)
		if len(tp.Columns) != tc.cols {
			t.Fatalf("%s: %d columns, want %d", tc.name, len(tp.Columns), tc.cols)
		}
		n := Tokens(tp.Markdown(0))
		t.Logf("%s (%d columns): %d tokens at the default budget", tc.name, tc.cols, n)
		if n > tc.max {
			t.Errorf("%s: %d tokens > %d", tc.name, n, tc.max)
		}
	}
}

// Finding 5: past 10,000 distinct values sketch upper bounds were printed
// as counts (~99 for values seen 6 times), the true most frequent value
// was missing, and rare: named a frequent value.
func TestSketch_GuaranteedCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 13))
	var b strings.Builder
	b.WriteString("order_id,city\n")
	truth := map[string]map[string]int64{"order_id": {}, "city": {}}
	for o := 0; o < 16000; o++ {
		id := fmt.Sprintf("CA-%d-%d", 2011+o%4, 100000+o*7)
		for range 1 + r.IntN(7) {
			// cities: a few heavy ones, then a long tail of 20,000
			city := fmt.Sprintf("tail city %d", r.IntN(20000))
			if x := r.IntN(10); x < 4 {
				city = []string{"New York City", "Los Angeles", "Philadelphia", "San Francisco"}[x]
			}
			fmt.Fprintf(&b, "%s,%s\n", id, city)
			truth["order_id"][id]++
			truth["city"][city]++
		}
	}
	tp := profileFile(t, writeTemp(t, "orders.csv", b.String()))
	md := tp.Markdown(100000)
	for name, counts := range truth {
		c := col(tp, name)
		for _, v := range c.Top {
			lo, hi := v.Count, v.Count
			if v.Approx {
				lo = v.Min
			}
			if n := counts[v.Value]; n < lo || n > hi {
				t.Errorf("%s: %s listed %d..%d, true %d", name, v.Value, lo, hi, n)
			}
		}
		for _, v := range c.Rare {
			if v.Count*100 > tp.Rows {
				t.Errorf("%s: rare %s has %d rows", name, v.Value, v.Count)
			}
		}
	}
	if c := col(tp, "order_id"); len(c.Top) > 0 {
		t.Errorf("near-unique order_id lists top values %v", c.Top)
	}
	city := col(tp, "city")
	var heavy []string
	for _, v := range city.Top[:min(4, len(city.Top))] {
		heavy = append(heavy, v.Value)
	}
	slices.Sort(heavy)
	if want := []string{"Los Angeles", "New York City", "Philadelphia", "San Francisco"}; !slices.Equal(heavy, want) {
		t.Errorf("city top = %v, want the four heavy cities first", city.Top)
	}
	if l := mdLine(t, md, "order_id"); strings.Contains(l, "top") || strings.Contains(l, "rare") {
		t.Errorf("order_id line names values: %s", l)
	}
}

// Finding 6: codes (ZIP, precinct, district) got means; placeholder codes
// were not flagged.
func TestCodes_AndPlaceholders(t *testing.T) {
	tp := profileFile(t, "testdata/csv/edge-codes.csv")
	md := tp.Markdown(0)
	for _, name := range []string{"Incident Zip", "Police Precinct", "Council District"} {
		c := col(tp, name)
		if c.Type != TypeCode || c.Numeric != nil {
			t.Errorf("%s: type %s, numeric %v; want a code without statistics", name, c.Type, c.Numeric)
		}
		if l := mdLine(t, md, name); strings.Contains(l, "mean") || !strings.Contains(l, "code") {
			t.Errorf("%s line: %s", name, l)
		}
	}
	want := map[string]string{
		"Incident Zip": "placeholders 88888 3, 99999 2",
		"amount":       "placeholders 99999 2",
		"Borough":      "placeholders Unspecified 10",
	}
	for name, w := range want {
		if l := mdLine(t, md, name); !strings.Contains(l, w) {
			t.Errorf("%s: %s lacks %q", name, l, w)
		}
	}
	if c := col(tp, "amount"); c.Type != TypeInteger {
		t.Errorf("amount type %s, want integer", c.Type)
	}
}

// Finding 7: values were cut at 40 characters (long values rendered the
// same) and leading spaces trimmed silently.
func TestCatalog_ExactSpellings(t *testing.T) {
	tp := profileFile(t, "testdata/csv/edge-spellings.csv")
	if l := mdLine(t, tp.Markdown(0), "workclass"); !strings.Contains(l, `values: " Private", " Local-gov ", " Self-emp", Private`) {
		t.Errorf("default budget: %s", l)
	}
	md := tp.Markdown(100000)
	wc := col(tp, "workclass")
	var got []string
	for _, v := range wc.Top {
		got = append(got, v.Value)
	}
	slices.Sort(got)
	if want := []string{" Local-gov ", " Private", " Self-emp", "Private"}; !slices.Equal(got, want) {
		t.Errorf("workclass values %q, want %q", got, want)
	}
	l := mdLine(t, md, "workclass")
	for _, w := range []string{`" Private" 8`, `, Private 4`, `" Local-gov " 4`} {
		if !strings.Contains(l, w) {
			t.Errorf("workclass line lacks %s: %s", w, l)
		}
	}
	res := splitOutside(mdLine(t, md, "resolution"), "; ")
	var vals []string
	for _, f := range res {
		if b, ok := strings.CutPrefix(f, "values "); ok {
			vals, _ = catalogItems(b, "")
		}
	}
	if len(vals) != 4 {
		t.Fatalf("resolution lists %d values: %s", len(vals), res)
	}
	for _, v := range vals {
		head, tail, _ := strings.Cut(v, "…")
		n := 0
		for _, raw := range col(tp, "resolution").Top {
			if strings.HasPrefix(raw.Value, head) && strings.HasSuffix(raw.Value, tail) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q matches %d values, want exactly one", v, n)
		}
	}
	if !strings.Contains(md, "is shortened") {
		t.Errorf("no note that values were shortened:\n%s", md)
	}
}

// Finding 8a: JSON and JSON Lines columns came out in alphabetical order.
func TestJSON_SourceOrder(t *testing.T) {
	p := writeTemp(t, "o.jsonl", `{"zeta":1,"alpha":"x","mid":{"b":1,"a":2},"omega":true}`+"\n"+`{"zeta":2,"beta":3}`+"\n")
	if got, want := strings.Join(colNames(profileFile(t, p)), ","), "zeta,alpha,mid.b,mid.a,omega,beta"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	p = writeTemp(t, "o.json", `[{"zeta":1,"alpha":"x"},{"beta":2}]`)
	if got, want := strings.Join(colNames(profileFile(t, p)), ","), "zeta,alpha,beta"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
}

// Finding 8b: a ;-delimited file with decimal commas made Sales and
// Profit identifiers without a warning.
func TestCSV_DecimalComma(t *testing.T) {
	tp := profileFile(t, "testdata/csv/edge-decimal-comma.csv")
	for name, want := range map[string]string{"Sales": "14.62..1234.5", "Profit": "-383.031..219.582", "Discount": "0..0.45"} {
		c := col(tp, name)
		if c.Type != TypeDecimal || c.Format != formatDecComma {
			t.Errorf("%s: %s %q, want decimal %s", name, c.Type, c.Format, formatDecComma)
			continue
		}
		if got := num(c.Numeric.Min, false) + ".." + num(c.Numeric.Max, false); got != want {
			t.Errorf("%s range %s, want %s", name, got, want)
		}
	}
	if c := col(tp, "Quantity"); c.Type != TypeInteger {
		t.Errorf("Quantity type %s", c.Type)
	}
}

// Finding 8c: a composite key (Country Code + Year) was not detected.
func TestProfile_CompositeKey(t *testing.T) {
	tp := profileFile(t, "testdata/datasets/worldbank_gdp.csv.gz")
	if !slices.ContainsFunc(tp.CompositeKeys, func(k []string) bool { return slices.Equal(k, []string{"Country Code", "Year"}) }) {
		t.Errorf("composite keys %v, want Country Code + Year", tp.CompositeKeys)
	}
	if md := tp.Markdown(0); !strings.Contains(md, "Country Code + Year") {
		t.Errorf("composite key not rendered:\n%s", md)
	}
	// a pair that repeats late in the file is not a key
	var b strings.Builder
	b.WriteString("a,b,v\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "%d,%d,x%d\n", i%100, i/100, i%7)
	}
	b.WriteString("3,4,y\n")
	if tp := profileFile(t, writeTemp(t, "late.csv", b.String())); len(tp.CompositeKeys) != 0 {
		t.Errorf("composite keys %v on a table whose last row repeats a pair", tp.CompositeKeys)
	}
	// A wide table: the key is its last two columns, after 200 that repeat
	// and whose 19,900 pairs the screening has to order.
	b.Reset()
	for k := range 200 {
		fmt.Fprintf(&b, "n%d,", k)
	}
	b.WriteString("a,b\n")
	for i := range 2500 {
		for k := range 200 {
			fmt.Fprintf(&b, "%d,", i*(k+1)%50)
		}
		fmt.Fprintf(&b, "%d,%d\n", i%100, i/100)
	}
	tp = profileFile(t, writeTemp(t, "wide.csv", b.String()))
	if !slices.ContainsFunc(tp.CompositeKeys, func(k []string) bool { return slices.Equal(k, []string{"a", "b"}) }) {
		t.Errorf("composite keys %v of the wide table, want a + b", tp.CompositeKeys)
	}
}

// A composite key checked past the pair set's limit is an estimate.
func TestPairAcc_CappedSet(t *testing.T) {
	mk := func(n, offset int) *pairAcc {
		a, b := array.NewStringBuilder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator)
		for i := range n {
			a.Append(strconv.Itoa((i + offset) % 50))
			b.Append(strconv.Itoa((i + offset) / 50))
		}
		cols := []arrow.Array{a.NewArray(), b.NewArray()}
		r := newRowAcc()
		r.pairs.setLimit = 3000
		r.addBatch(cols, n)
		return &r.pairs
	}
	if pairs, approx := mk(5000, 0).keys(2); len(pairs) != 1 || !approx {
		t.Errorf("keys = %v approx %v, want one estimated pair", pairs, approx)
	}
	if pairs, approx := mk(2500, 0).keys(2); len(pairs) != 1 || approx {
		t.Errorf("keys = %v approx %v, want one exact pair", pairs, approx)
	}
}
