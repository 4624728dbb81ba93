package profiler

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"
)

// The fidelity check parses every figure a rendered profile prints and
// compares it with an exact computation over the same file, written here
// independently of the profiler: a printed figure must be the exact
// value, or the exact value correctly rounded to the digits printed
// (sketched figures, marked ~, within their stated error).

// refTable is a file read by the reference: a header and rows of raw
// cells; a cell missing from a short row is absent (present false).
type refTable struct {
	names []string
	cells [][]string // [column][row]
	have  [][]bool
	rows  int
	dups  int
}

func readRefCSV(t *testing.T, path string, delim rune, noHeader []string) *refTable {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if strings.Contains(path, "cp1252") {
		data, _ = charmap.Windows1252.NewDecoder().Bytes(data)
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma, r.FieldsPerRecord, r.LazyQuotes = delim, -1, true
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var body [][]string
	if noHeader != nil {
		recs = append([][]string{noHeader}, recs...)
	}
	for _, rec := range recs[1:] {
		if len(rec) == 1 && rec[0] == "" {
			continue
		}
		body = append(body, rec)
	}
	return newRefTable(recs[0], body)
}

func newRefTable(names []string, body [][]string) *refTable {
	rt := &refTable{names: names, rows: len(body)}
	rt.cells = make([][]string, len(names))
	rt.have = make([][]bool, len(names))
	seen := map[string]bool{}
	for _, rec := range body {
		var key strings.Builder
		for c := range names {
			v, ok := "", c < len(rec)
			if ok {
				v = rec[c]
				key.WriteString(strings.Trim(v, " \t\r\n"))
			} else {
				key.WriteString("\x01")
			}
			key.WriteByte(0)
			rt.cells[c] = append(rt.cells[c], v)
			rt.have[c] = append(rt.have[c], ok)
		}
		if seen[key.String()] {
			rt.dups++
		}
		seen[key.String()] = true
	}
	return rt
}

// readRefJSON reads JSON Lines or a JSON array of objects, flattening
// nested objects one level with dotted names.
func readRefJSON(t *testing.T, path string, names []string) *refTable {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		if err := dec.Decode(&objs); err != nil {
			t.Fatal(err)
		}
	} else {
		for {
			var m map[string]any
			if err := dec.Decode(&m); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, m)
		}
	}
	rt := &refTable{names: names, rows: len(objs), cells: make([][]string, len(names)), have: make([][]bool, len(names))}
	for _, o := range objs {
		for c, n := range names {
			var v any = o
			for _, part := range strings.SplitN(n, ".", 2) {
				m, _ := v.(map[string]any)
				v = m[part]
			}
			s, ok := "", v != nil
			switch x := v.(type) {
			case string:
				s = x
			case json.Number:
				s = x.String()
			case bool:
				s = strconv.FormatBool(x)
			case nil:
			default:
				b, _ := json.Marshal(x)
				s = string(b)
			}
			rt.cells[c] = append(rt.cells[c], s)
			rt.have[c] = append(rt.have[c], ok)
		}
	}
	return rt
}

var refNullTokens = []string{"?", "na", "n/a", "nan", "nil", "null", "none", "#n/a"}

func refMissing(raw string, have bool) bool {
	v := strings.Trim(raw, " \t\r\n")
	return !have || v == "" || slices.Contains(refNullTokens, strings.ToLower(v))
}

var (
	refNumRe   = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)
	refCommaRe = regexp.MustCompile(`^[+-]?(\d{1,3}(\.\d{3})+|\d+),\d+$`)
	// refGroupedRe: 1,234.5, 1,234,567 or 1,234 in a column printed as
	// having thousands separators.
	refGroupedRe = regexp.MustCompile(`^[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?$`)
)

// refNumber parses a trimmed value as the column's format says numbers
// are written.
func refNumber(v string, comma, grouped bool, unit string) (float64, bool) {
	if inner, ok := strings.CutPrefix(v, "("); ok && strings.HasSuffix(inner, ")") {
		v = "-" + strings.TrimSuffix(inner, ")")
	}
	if unit != "" {
		sign := ""
		if strings.HasPrefix(v, "-") {
			sign, v = "-", v[1:]
		}
		v = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(v, unit), unit))
		v = sign + v
	}
	if grouped && refGroupedRe.MatchString(v) {
		f, err := strconv.ParseFloat(strings.ReplaceAll(v, ",", ""), 64)
		return f, err == nil
	}
	if comma && refCommaRe.MatchString(v) {
		f, err := strconv.ParseFloat(strings.Replace(strings.ReplaceAll(v, ".", ""), ",", ".", 1), 64)
		return f, err == nil
	}
	if !refNumRe.MatchString(v) || comma && strings.ContainsAny(v, ".eE") {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// refLayouts maps a printed date format to a Go layout.
var refLayouts = map[string]string{
	"YYYY-MM-DD": "2006-01-02", "YYYY-MM-DD HH:mm:ss": "2006-01-02 15:04:05", "YYYY-MM-DDTHH:mm:ss": "2006-01-02T15:04:05",
	"RFC 3339": time.RFC3339, "YYYY/MM/DD": "2006/01/02", "MM/DD/YYYY": "1/2/2006", "DD/MM/YYYY": "2/1/2006",
	"DD-MM-YYYY": "2-1-2006", "MM-DD-YYYY": "1-2-2006", "DD.MM.YYYY": "2.1.2006",
	"MM/DD/YYYY hh:mm:ss AM": "1/2/2006 3:04:05 PM", "DD/MM/YYYY hh:mm:ss AM": "2/1/2006 3:04:05 PM",
	"MM/DD/YYYY HH:mm:ss": "1/2/2006 15:04:05", "DD/MM/YYYY HH:mm:ss": "2/1/2006 15:04:05",
	"Mon D, YYYY": "Jan 2, 2006", "Month D, YYYY": "January 2, 2006", "Mon D YYYY": "Jan 2 2006",
	"D Mon YYYY": "2 Jan 2006", "D Month YYYY": "2 January 2006",
}

// refCol is the exact statistics of one column.
type refCol struct {
	count, missing, padded int64
	counts                 map[string]int64
	masked                 map[string]int64 // rows per mask
	maskedVals             map[string][]string
}

func (rt *refTable) col(c int) *refCol {
	rc := &refCol{counts: map[string]int64{}, masked: map[string]int64{}, maskedVals: map[string][]string{}}
	for i, v := range rt.cells[c] {
		if refMissing(v, rt.have[c][i]) {
			rc.missing++
			continue
		}
		rc.count++
		rc.counts[v]++
		if m := maskText(v); m != v && rc.counts[v] == 1 {
			// a catalog shows such a value as its mask; masks are never
			// raw values, so they can be counted alongside
			rc.maskedVals[m] = append(rc.maskedVals[m], v)
		}
		if m := maskText(v); m != v {
			rc.masked[m]++
		}
		if strings.Trim(v, " \t\r\n") != v {
			rc.padded++
		}
	}
	return rc
}

// splitOutside splits s at sep where sep is not inside a quoted string.
func splitOutside(s, sep string) []string {
	var out []string
	start, inQ := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && inQ:
			i++
		case s[i] == '"':
			inQ = !inQ
		case !inQ && strings.HasPrefix(s[i:], sep):
			out = append(out, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(out, s[start:])
}

// fidelity checks every figure of md against rt; tp gives the column
// types and names the figures belong to.
type fidelity struct {
	t      *testing.T
	name   string
	checks int
	lead   string // what every text value starts with, said once in the header
}

func (f *fidelity) errorf(format string, args ...any) {
	f.t.Helper()
	f.t.Errorf(f.name+": "+format, args...)
}

// halfUnit is half the unit of the last digit printed in s.
func halfUnit(s string) float64 {
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		exp, _ = strconv.Atoi(s[i+1:])
	}
	dec := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		dec = len(mant) - i - 1
	}
	return 0.5 * math.Pow(10, float64(exp-dec))
}

// near checks that printed is want correctly rounded to its digits.
func (f *fidelity) near(what, printed string, want float64) {
	f.t.Helper()
	f.checks++
	got, err := strconv.ParseFloat(printed, 64)
	if err != nil {
		f.errorf("%s: cannot parse %q", what, printed)
		return
	}
	if d := math.Abs(got - want); d > halfUnit(printed)*(1+1e-9)+1e-12*math.Abs(want) {
		f.errorf("%s printed %s, exact %v", what, printed, want)
	}
}

func (f *fidelity) pct(what, printed string, n, total int64) {
	f.t.Helper()
	if strings.HasSuffix(printed, "%") {
		f.near(what, strings.TrimSuffix(printed, "%"), 100*float64(n)/float64(total))
		return
	}
	f.exact(what, printed, n)
}

func (f *fidelity) exact(what, printed string, want int64) {
	f.t.Helper()
	f.checks++
	got, err := strconv.ParseInt(strings.ReplaceAll(printed, ",", ""), 10, 64)
	if err != nil || got != want {
		f.errorf("%s printed %s, exact %d", what, printed, want)
	}
}

func refQuantile(sorted []float64, q float64) float64 {
	return sorted[max(int(math.Ceil(q*float64(len(sorted))))-1, 0)]
}

var (
	rangeRe    = regexp.MustCompile(`^(-?[0-9.e]+(?:e-?\d+)?)\.\.(-?[0-9.e]+(?:e-?\d+)?)$`)
	moreRe     = regexp.MustCompile(`^\+(~?)(\d+) more values(?: in (\d+) rows)?$`)
	notParseRe = regexp.MustCompile(`(\d+) values do not parse as`)
	otherKind  = regexp.MustCompile(`(\d+) values are [a-z/ -]+, not`)
)

// checkProfile runs the fidelity check of md (rendered from tp) against rt.
func checkProfile(t *testing.T, name string, tp *TableProfile, md string, rt *refTable) int {
	t.Helper()
	f := &fidelity{t: t, name: name}
	head := strings.SplitN(md, "\n", 3)[1]
	if i := strings.Index(head, "every text value starts with "); i >= 0 {
		q, _ := strconv.QuotedPrefix(head[i+len("every text value starts with "):])
		f.lead, _ = strconv.Unquote(q)
	}
	f.exact("rows", strings.Fields(head)[0], int64(rt.rows))
	if i := strings.Index(head, "duplicate rows: "); i >= 0 && !tp.DuplicatesLower {
		f.exact("duplicate rows", strings.TrimRight(strings.Fields(head[i+16:])[0], ";"), int64(rt.dups))
	}
	byName := map[string]int{}
	for i, n := range rt.names {
		byName[strings.TrimSpace(n)] = i
	}
	unique := func(cols ...int) bool {
		seen := map[string]bool{}
		for r := range rt.rows {
			var k strings.Builder
			for _, c := range cols {
				if refMissing(rt.cells[c][r], rt.have[c][r]) {
					return false
				}
				k.WriteString(strings.Trim(rt.cells[c][r], " \t\r\n") + "\x00")
			}
			if seen[k.String()] {
				return false
			}
			seen[k.String()] = true
		}
		return true
	}
	for _, ck := range tp.CompositeKeys {
		f.checks++
		if !unique(byName[ck[0]], byName[ck[1]]) {
			f.errorf("composite key %v does not identify rows", ck)
		}
	}
	for ci, c := range tp.Columns {
		var line string
		for _, l := range strings.Split(md, "\n") {
			if strings.HasPrefix(l, "- "+c.Name+": ") {
				line = strings.TrimPrefix(l, "- "+c.Name+": ")
				break
			}
		}
		if line == "" {
			f.errorf("column %s not rendered", c.Name)
			continue
		}
		ri, ok := byName[c.Name]
		if !ok {
			ri = ci
		}
		rc := rt.col(ri)
		comma, grouped := c.Format == formatDecComma, c.Format == formatGrouped
		var nums []float64
		var zeros, negs int64
		distinctNums := map[float64]bool{}
		for v, n := range rc.counts {
			if x, ok := refNumber(strings.Trim(v, " \t\r\n"), comma, grouped, c.Unit); ok {
				distinctNums[x] = true
				for range n {
					nums = append(nums, x)
				}
				if x == 0 {
					zeros += n
				} else if x < 0 {
					negs += n
				}
			}
		}
		slices.Sort(nums)
		facts := splitOutside(line, "; ")
		for _, fact := range facts[1:] {
			what := c.Name + ": " + fact
			switch {
			case strings.HasPrefix(fact, "missing "):
				f.pct(what, strings.Fields(fact)[1], rc.missing, int64(rt.rows))
			case fact == "unique":
				f.checks++
				if int64(len(rc.counts)) != rc.count || rc.missing > 0 {
					f.errorf("%s: %d distinct of %d, %d missing", what, len(rc.counts), rc.count, rc.missing)
				}
			case strings.HasSuffix(fact, " distinct"), strings.HasSuffix(fact, " distinct (near-unique)"):
				p := strings.TrimSuffix(strings.TrimSuffix(fact, " (near-unique)"), " distinct")
				if strings.HasPrefix(p, "~") {
					got, _ := strconv.ParseFloat(strings.ReplaceAll(p[1:], ",", ""), 64)
					f.checks++
					if want := float64(len(rc.counts)); math.Abs(got-want) > 0.03*want {
						f.errorf("%s: exact %v", what, want)
					}
				} else {
					f.exact(what, p, int64(len(rc.counts)))
				}
			case strings.HasPrefix(fact, "range "):
				m := rangeRe.FindStringSubmatch(strings.TrimPrefix(fact, "range "))
				f.near(what+" min", m[1], nums[0])
				f.near(what+" max", m[2], nums[len(nums)-1])
			case strings.HasPrefix(fact, "every integer "):
				m := rangeRe.FindStringSubmatch(strings.TrimPrefix(fact, "every integer "))
				f.near(what+" min", m[1], nums[0])
				f.near(what+" max", m[2], nums[len(nums)-1])
				f.checks++
				if float64(len(distinctNums)) != nums[len(nums)-1]-nums[0]+1 || int64(len(distinctNums)) != int64(len(rc.counts)) {
					f.errorf("%s: %d distinct numbers", what, len(distinctNums))
				}
			case c.Numeric != nil && rangeRe.MatchString(fact):
				m := rangeRe.FindStringSubmatch(fact)
				f.near(what+" min", m[1], nums[0])
				f.near(what+" max", m[2], nums[len(nums)-1])
			case c.Dates != nil && strings.Contains(fact, ".."):
				f.checkDates(what, fact, c, rc)
			case strings.HasPrefix(fact, "mean "):
				w := strings.Fields(fact)
				var sum float64
				for _, x := range nums {
					sum += x
				}
				mean := sum / float64(len(nums))
				var m2 float64
				for _, x := range nums {
					m2 += (x - mean) * (x - mean)
				}
				f.near(what+" mean", w[1], mean)
				if len(nums) > 1 {
					f.near(what+" sd", w[3], math.Sqrt(m2/float64(len(nums)-1)))
				}
			case strings.HasPrefix(fact, "q ") && c.Numeric != nil:
				for i, q := range strings.Split(fact[2:], "/") {
					if len(distinctNums) <= 10000 {
						f.near(what, q, refQuantile(nums, QuantileRanks[i]))
					} else {
						v, _ := strconv.ParseFloat(q, 64)
						rank := float64(sortSearch(nums, v)) / float64(len(nums))
						f.checks++
						if math.Abs(rank-QuantileRanks[i]) > 0.02 {
							f.errorf("%s: rank %.3f", what, rank)
						}
					}
				}
			case strings.HasPrefix(fact, "q ") && c.Dates != nil:
				f.checkDateQuantiles(what, fact, c, rc)
			case strings.HasPrefix(fact, "zeros "):
				f.pct(what, strings.Fields(fact)[1], zeros, int64(rt.rows))
			case strings.HasPrefix(fact, "neg "):
				f.pct(what, strings.Fields(fact)[1], negs, int64(rt.rows))
			case strings.HasPrefix(fact, "values: "), strings.HasPrefix(fact, "values (each after "):
				f.checkValuesOnly(what, fact, rc)
			case strings.HasPrefix(fact, "values "), strings.HasPrefix(fact, "top "), strings.HasPrefix(fact, "rare "),
				strings.HasPrefix(fact, "placeholders "):
				f.checkCatalog(what, fact, rc)
			case moreRe.MatchString(fact):
				f.checkMore(what, fact, facts, rc)
			case strings.HasPrefix(fact, "surrounding spaces "):
				f.pct(what, strings.Fields(fact)[2], rc.padded, int64(rt.rows))
			case strings.HasPrefix(fact, "len "):
				m := strings.Split(fact[4:], "..")
				lo, hi := math.MaxInt, 0
				for v := range rc.counts {
					n := len([]rune(strings.Trim(v, " \t\r\n")))
					lo, hi = min(lo, n), max(hi, n)
				}
				f.exact(what+" min", m[0], int64(lo))
				f.exact(what+" max", m[1], int64(hi))
			case strings.HasPrefix(fact, "⚠ "):
				f.checkWarnings(what, fact, c, rc)
			}
		}
	}
	return f.checks
}

func sortSearch(sorted []float64, v float64) int {
	i, _ := slices.BinarySearch(sorted, v)
	return i
}

func (f *fidelity) checkDates(what, fact string, c *ColumnProfile, rc *refCol) {
	f.t.Helper()
	layout, ok := refLayouts[c.Format]
	if !ok {
		f.errorf("%s: unknown format %q", what, c.Format)
		return
	}
	out := "2006-01-02"
	if c.Type == TypeDateTime {
		out = "2006-01-02 15:04:05"
	}
	var lo, hi time.Time
	for v := range rc.counts {
		tm, err := time.Parse(layout, strings.Trim(v, " \t\r\n"))
		if err != nil {
			continue
		}
		if lo.IsZero() || tm.Before(lo) {
			lo = tm
		}
		if hi.IsZero() || tm.After(hi) {
			hi = tm
		}
	}
	f.checks++
	if want := lo.UTC().Format(out) + ".." + hi.UTC().Format(out); fact != want {
		f.errorf("%s: exact %s", what, want)
	}
}

// checkDateQuantiles checks printed date quantiles: exact while the
// column has at most 10,000 distinct values, within 2% of rank beyond.
func (f *fidelity) checkDateQuantiles(what, fact string, c *ColumnProfile, rc *refCol) {
	f.t.Helper()
	layout := refLayouts[c.Format]
	out := "2006-01-02"
	if c.Type == TypeDateTime {
		out = "2006-01-02 15:04:05"
	}
	var ts []float64
	for v, n := range rc.counts {
		if tm, err := time.Parse(layout, strings.Trim(v, " \t\r\n")); err == nil {
			for range n {
				ts = append(ts, float64(tm.Unix()))
			}
		}
	}
	slices.Sort(ts)
	for i, q := range strings.Split(fact[2:], "/") {
		f.checks++
		if len(rc.counts) <= 10000 {
			if want := time.Unix(int64(refQuantile(ts, QuantileRanks[i])), 0).UTC().Format(out); q != want {
				f.errorf("%s: p%v printed %s, exact %s", what, QuantileRanks[i], q, want)
			}
			continue
		}
		tm, err := time.Parse(out, q)
		if err != nil {
			f.errorf("%s: cannot parse %q", what, q)
			continue
		}
		if rank := float64(sortSearch(ts, float64(tm.Unix()))) / float64(len(ts)); math.Abs(rank-QuantileRanks[i]) > 0.02 {
			f.errorf("%s: p%v at rank %.3f", what, QuantileRanks[i], rank)
		}
	}
}

// catalogItems parses "values (each after " ") a 1, "b, c" 2–3" into
// raw values (prefix restored) and printed counts.
func catalogItems(body string, lead string) (vals, counts []string) {
	if strings.HasPrefix(body, "(each after ") {
		rest := body[len("(each after "):]
		q, _ := strconv.QuotedPrefix(rest)
		lead, _ = strconv.Unquote(q)
		body = strings.TrimPrefix(rest[len(q):], ") ")
	}
	for _, it := range splitOutside(body, ", ") {
		sp := strings.LastIndexByte(it, ' ')
		v, n := it[:sp], it[sp+1:]
		if strings.HasPrefix(v, `"`) {
			v, _ = strconv.Unquote(v)
		}
		vals, counts = append(vals, lead+v), append(counts, n)
	}
	return vals, counts
}

// matchValue finds the raw value a printed one stands for: itself, or for
// a shortened one the only value with its start and end.
func matchValue(printed string, rc *refCol) (string, bool) {
	// encoding/csv turns \r\n inside a quoted field into \n; the
	// profiler keeps the bytes of the file
	printed = strings.ReplaceAll(printed, "\r\n", "\n")
	if _, ok := rc.counts[printed]; ok {
		return printed, true
	}
	if i := strings.Index(printed, "…"); i >= 0 {
		head, tail := printed[:i], printed[i+len("…"):]
		var found []string
		for v := range rc.counts {
			if strings.HasPrefix(v, head) && strings.HasSuffix(v, tail) && len(v) >= len(head)+len(tail) {
				found = append(found, v)
			}
		}
		if len(found) == 1 {
			return found[0], true
		}
	}
	return "", false
}

func (f *fidelity) checkCatalog(what, fact string, rc *refCol) {
	f.t.Helper()
	_, body, _ := strings.Cut(fact, " ")
	placeholder := strings.HasPrefix(fact, "placeholders ")
	vals, counts := catalogItems(body, f.lead)
	for i, v := range vals {
		if isMask(v) {
			if !placeholder {
				f.exact(what+" count of "+v, counts[i], rc.masked[v])
			}
			continue
		}
		raw, ok := matchValue(v, rc)
		if !ok && placeholder {
			// a placeholder of a number column is printed trimmed
			for r := range rc.counts {
				if strings.Trim(r, " \t\r\n") == v {
					raw, ok = r, true
				}
			}
		}
		if !ok {
			f.checks++
			f.errorf("%s: value %q is not in the file as printed", what, v)
			continue
		}
		want := rc.counts[raw]
		if placeholder {
			want = 0
			for r, n := range rc.counts {
				if strings.Trim(r, " \t\r\n") == strings.Trim(raw, " \t\r\n") {
					want += n
				}
			}
		}
		if lo, hi, ok := strings.Cut(counts[i], "–"); ok {
			a, _ := strconv.ParseInt(lo, 10, 64)
			b, _ := strconv.ParseInt(hi, 10, 64)
			f.checks++
			if want < a || want > b {
				f.errorf("%s: %q count %s, exact %d", what, v, counts[i], want)
			}
			continue
		}
		f.exact(what+" count of "+strconv.Quote(v), counts[i], want)
	}
}

// checkValuesOnly checks a complete catalog printed without counts: every
// value of the column, each once, most frequent first.
func (f *fidelity) checkValuesOnly(what, fact string, rc *refCol) {
	f.t.Helper()
	body := strings.TrimPrefix(fact, "values")
	lead := f.lead
	if strings.HasPrefix(body, " (each after ") {
		rest := body[len(" (each after "):]
		q, _ := strconv.QuotedPrefix(rest)
		lead, _ = strconv.Unquote(q)
		body = rest[len(q)+1:]
	}
	body = strings.TrimPrefix(body, ": ")
	seen := map[string]bool{}
	prev := int64(math.MaxInt64)
	for _, it := range splitOutside(body, ", ") {
		v := it
		if strings.HasPrefix(v, `"`) {
			v, _ = strconv.Unquote(v)
		}
		f.checks++
		if isMask(v) {
			continue
		}
		raw, ok := matchValue(lead+v, rc)
		if !ok || seen[raw] {
			f.errorf("%s: value %q is not in the file as printed, or repeated", what, lead+v)
			continue
		}
		seen[raw] = true
		if rc.counts[raw] > prev {
			f.errorf("%s: %q listed after a less frequent value", what, v)
		}
		prev = rc.counts[raw]
	}
	masked := 0
	for _, vs := range rc.maskedVals {
		masked += len(vs)
	}
	f.checks++
	if len(seen)+masked != len(rc.counts) {
		f.errorf("%s: lists %d of %d values", what, len(seen)+masked, len(rc.counts))
	}
}

// checkMore checks "+N more values in M rows" against the catalog before it.
func (f *fidelity) checkMore(what, fact string, facts []string, rc *refCol) {
	f.t.Helper()
	m := moreRe.FindStringSubmatch(fact)
	var shown []string
	var rows int64
	for _, o := range facts {
		if strings.HasPrefix(o, "top ") || strings.HasPrefix(o, "rare ") {
			_, body, _ := strings.Cut(o, " ")
			vals, _ := catalogItems(body, f.lead)
			for _, v := range vals {
				if isMask(v) {
					shown = append(shown, rc.maskedVals[v]...)
					rows += rc.masked[v]
					continue
				}
				if raw, ok := matchValue(v, rc); ok {
					shown = append(shown, raw)
					rows += rc.counts[raw]
				}
			}
		}
	}
	wantVals := int64(len(rc.counts) - len(shown))
	if m[1] == "~" {
		got, _ := strconv.ParseFloat(m[2], 64)
		f.checks++
		if math.Abs(got-float64(wantVals)) > 0.03*float64(len(rc.counts)) {
			f.errorf("%s: exact %d", what, wantVals)
		}
		return
	}
	f.exact(what+" values", m[2], wantVals)
	if m[3] != "" {
		f.exact(what+" rows", m[3], rc.count-rows)
	}
}

// checkWarnings checks counted warnings: values of another kind and
// values the column's date layout does not parse.
func (f *fidelity) checkWarnings(what, fact string, c *ColumnProfile, rc *refCol) {
	f.t.Helper()
	m := notParseRe.FindStringSubmatch(fact)
	if m == nil || c.Dates == nil {
		return
	}
	other := int64(0)
	for _, o := range otherKind.FindAllStringSubmatch(fact, -1) {
		n, _ := strconv.ParseInt(o[1], 10, 64)
		other += n
	}
	layout := refLayouts[c.Format]
	var bad int64
	for v, n := range rc.counts {
		if _, err := time.Parse(layout, strings.Trim(v, " \t\r\n")); err != nil {
			bad += n
		}
	}
	f.exact(what, m[1], bad-other)
}

// fidelityFixtures are every file the profiler's tests render, with the
// delimiter the reference reads them with (0 for JSON).
func fidelityFixtures(t *testing.T) []struct {
	name, path string
	delim      rune
} {
	return []struct {
		name, path string
		delim      rune
	}{
		{"small", "testdata/csv/small.csv", ','},
		{"bom-crlf-semicolon", "testdata/csv/bom-crlf-semicolon.csv", ';'},
		{"tabs", "testdata/csv/tabs.tsv", '\t'},
		{"cp1252", "testdata/csv/cp1252.csv", ','},
		{"customers", "testdata/pii/customers.csv", ','},
		{"npm-tokens", "testdata/pii/npm-tokens.csv", ','},
		{"json-lines", "testdata/json-lines.jsonl", 0},
		{"json-array", "testdata/array.json", 0},
		{"worldbank_gdp", "testdata/datasets/worldbank_gdp.csv.gz", ','},
		{"uci_adult", "testdata/datasets/uci_adult.csv.gz", ','},
		{"edge-dates", "testdata/csv/edge-dates.csv", ','},
		{"edge-numbers", "testdata/csv/edge-numbers.csv", ','},
		{"edge-codes", "testdata/csv/edge-codes.csv", ','},
		{"edge-spellings", "testdata/csv/edge-spellings.csv", ','},
		{"edge-decimal-comma", "testdata/csv/edge-decimal-comma.csv", ';'},
		{"edge-thousands", "testdata/csv/edge-thousands.csv", ','},
		{"edge-month-dates", "testdata/csv/edge-month-dates.csv", ','},
		{"nyc311-lookalike", writeTemp(t, "nyc311.csv", genNYC311(12000)), ','},
		{"superstore-lookalike", writeTemp(t, "superstore.csv", genSuperstore(30000, false)), ','},
		{"superstore-comma-lookalike", writeTemp(t, "superstore-comma.csv", genSuperstore(3000, true)), ';'},
		{"wide60", wideTable(t, 60, 3000), ','},
	}
}

// TestMarkdown_Fidelity checks every printed figure of every fixture, at
// the default budget and at a budget large enough for everything.
func TestMarkdown_Fidelity(t *testing.T) {
	for _, fx := range fidelityFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			tp := profileFile(t, fx.path)
			var rt *refTable
			if fx.delim == 0 {
				rt = readRefJSON(t, fx.path, colNames(tp))
			} else {
				var noHeader []string
				if slices.ContainsFunc(tp.Warnings, func(w string) bool { return strings.Contains(w, "no header row") }) {
					noHeader = colNames(tp)
				}
				rt = readRefCSV(t, fx.path, fx.delim, noHeader)
			}
			checks := 0
			for _, budget := range []int{0, 100000} {
				checks += checkProfile(t, fx.name, tp, tp.Markdown(budget), rt)
			}
			t.Logf("%d figures checked", checks)
			if checks < 2*len(tp.Columns) {
				t.Errorf("only %d figures checked for %d columns", checks, len(tp.Columns))
			}
		})
	}
}
