package profiler

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func profileFile(t testing.TB, path string) *TableProfile {
	t.Helper()
	tp, err := Profile(context.Background(), FileSource{Path: path}, nil)
	if err != nil {
		t.Fatalf("Profile(%s): %v", path, err)
	}
	return tp
}

func writeTemp(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProfile_Golden(t *testing.T) {
	cases := []struct{ name, path string }{
		{"small", "testdata/csv/small.csv"},
		{"bom-crlf-semicolon", "testdata/csv/bom-crlf-semicolon.csv"},
		{"tabs", "testdata/csv/tabs.tsv"},
		{"cp1252", "testdata/csv/cp1252.csv"},
		{"header-only", "testdata/csv/header-only.csv"},
		{"json-lines", "testdata/json-lines.jsonl"},
		{"json-array", "testdata/array.json"},
		{"customers", "testdata/pii/customers.csv"},
		{"npm-tokens", "testdata/pii/npm-tokens.csv"},
		{"worldbank_gdp", "testdata/datasets/worldbank_gdp.csv.gz"},
		{"uci_adult", "testdata/datasets/uci_adult.csv.gz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tp := profileFile(t, tc.path)
			md := tp.Markdown(0)
			js, err := json.MarshalIndent(tp, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			// determinism: a second run gives identical output
			if md2 := profileFile(t, tc.path).Markdown(0); md2 != md {
				t.Fatalf("rendering is not deterministic")
			}
			for _, g := range []struct {
				ext  string
				data []byte
			}{{".md", []byte(md)}, {".json", js}} {
				checkGolden(t, tc.name+g.ext, g.data)
			}
		})
	}
}

// checkGolden compares data with testdata/golden/name, or rewrites the
// file under -update.
func checkGolden(t *testing.T, name string, data []byte) {
	t.Helper()
	gp := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(gp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(gp)
	if err != nil {
		t.Fatalf("missing golden %s (run go test ./profiler -update): %v", gp, err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("%s differs from golden; run go test ./profiler -update and review.\ngot:\n%s", gp, data)
	}
}

// genTable writes a CSV with known distributions and returns exact values.
type genCols struct {
	ints    []int64
	heavy   []float64
	cats    []string
	missing int
}

func genExact(t testing.TB, n int) (string, genCols) {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("id,uniform_int,heavy,category,day\n")
	var g genCols
	for i := range n {
		u := r.Int64N(1000) - 100
		h := math.Pow(1-r.Float64(), -1/1.1) * 10 // Pareto, heavy tail
		cat := []string{"red", "green", "blue"}[r.IntN(3)]
		switch {
		case i%2000 == 7: // 0.05%
			cat = "ultraviolet"
		case i%97 == 0:
			cat = "NA"
			g.missing++
		}
		g.ints = append(g.ints, u)
		g.heavy = append(g.heavy, h)
		if cat != "NA" {
			g.cats = append(g.cats, cat)
		}
		fmt.Fprintf(&b, "%d,%d,%s,%s,2024-%02d-%02d\n", i+1, u, strconv.FormatFloat(h, 'g', -1, 64), cat, 1+i%12, 1+i%28)
	}
	return writeTemp(t, "exact.csv", b.String()), g
}

func col(tp *TableProfile, name string) *ColumnProfile {
	for _, c := range tp.Columns {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func exactQuantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func rankOf(sorted []float64, v float64) float64 {
	return float64(sort.SearchFloat64s(sorted, v)) / float64(len(sorted))
}

func TestProfile_Exactness(t *testing.T) {
	const n = 40000
	path, g := genExact(t, n)
	tp := profileFile(t, path)
	if got, want := tp.Rows, int64(n); got != want {
		t.Fatalf("rows = %d, want %d", got, want)
	}
	if got, want := tp.CandidateKeys, []string{"id"}; !slices.Equal(got, want) {
		t.Errorf("candidate keys = %v, want %v", got, want)
	}
	check := func(name string, vals []float64, typ string, exactQ bool) {
		c := col(tp, name)
		if got, want := c.Type, typ; got != want {
			t.Errorf("%s type = %s, want %s", name, got, want)
		}
		s := slices.Clone(vals)
		slices.Sort(s)
		var sum, zeros, negs float64
		for _, v := range s {
			sum += v
			if v == 0 {
				zeros++
			} else if v < 0 {
				negs++
			}
		}
		mean := sum / float64(len(s))
		var m2 float64
		for _, v := range s {
			m2 += (v - mean) * (v - mean)
		}
		std := math.Sqrt(m2 / float64(len(s)-1))
		ns := c.Numeric
		close := func(what string, got, want float64) {
			if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s %s = %v, want %v", name, what, got, want)
			}
		}
		close("min", ns.Min, s[0])
		close("max", ns.Max, s[len(s)-1])
		close("mean", ns.Mean, mean)
		close("std", ns.Std, std)
		close("zeros", float64(ns.Zeros), zeros)
		close("negatives", float64(ns.Negatives), negs)
		for _, q := range ns.Quantiles {
			if exactQ {
				close(fmt.Sprintf("q%v", q.Q), q.V, exactQuantile(s, q.Q))
			} else if d := math.Abs(rankOf(s, q.V) - q.Q); d > 0.015 {
				t.Errorf("%s q%v = %v has rank error %.4f > 1.5%%", name, q.Q, q.V, d)
			}
		}
	}
	ints := make([]float64, len(g.ints))
	for i, v := range g.ints {
		ints[i] = float64(v)
	}
	check("uniform_int", ints, TypeInteger, true)
	check("heavy", g.heavy, TypeDecimal, false)

	// distinct estimate within 2% (HLL beyond the exact threshold)
	h := map[float64]bool{}
	for _, v := range g.heavy {
		h[v] = true
	}
	if got, want := float64(col(tp, "heavy").Distinct), float64(len(h)); math.Abs(got-want)/want > 0.02 {
		t.Errorf("heavy distinct = %v, want %v ±2%%", got, want)
	}

	cat := col(tp, "category")
	counts := map[string]int64{}
	for _, v := range g.cats {
		counts[v]++
	}
	if got, want := cat.Nulls, int64(g.missing); got != want {
		t.Errorf("category nulls = %d, want %d", got, want)
	}
	if got, want := cat.Type, TypeCategorical; got != want {
		t.Errorf("category type = %s, want %s", got, want)
	}
	for _, v := range cat.Top {
		if got, want := v.Count, counts[v.Value]; got != want {
			t.Errorf("count(%s) = %d, want %d", v.Value, got, want)
		}
	}
	if got, want := len(cat.Top), len(counts); got != want {
		t.Errorf("catalog has %d values, want %d", got, want)
	}
	if md := tp.Markdown(0); !strings.Contains(md, "ultraviolet 20") {
		t.Errorf("0.05%% category missing from markdown:\n%s", md)
	}
	day := col(tp, "day")
	if got, want := day.Type, TypeDate; got != want {
		t.Errorf("day type = %s, want %s", got, want)
	}
	if got, want := day.Dates.Min+" "+day.Dates.Max, "2024-01-01 2024-12-28"; got != want {
		t.Errorf("day range = %s, want %s", got, want)
	}
}

// wideTable generates a table of ncols columns cycling through types.
func wideTable(t testing.TB, ncols, nrows int) string {
	r := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for c := range ncols {
		if c > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s_%d", []string{"id", "amount", "status", "created", "note", "count"}[c%6], c)
	}
	b.WriteByte('\n')
	for i := range nrows {
		for c := range ncols {
			if c > 0 {
				b.WriteByte(',')
			}
			switch c % 6 {
			case 0:
				fmt.Fprintf(&b, "%d", i*7+c)
			case 1:
				fmt.Fprintf(&b, "%.2f", r.ExpFloat64()*100)
			case 2:
				b.WriteString([]string{"open", "closed", "pending", "void", "archived", "new", "hold", "lost"}[r.IntN(8)])
			case 3:
				fmt.Fprintf(&b, "2023-%02d-%02d", 1+r.IntN(12), 1+r.IntN(28))
			case 4:
				fmt.Fprintf(&b, "note %d about item %d", r.IntN(100000), r.IntN(1000))
			case 5:
				fmt.Fprintf(&b, "%d", r.IntN(50))
			}
		}
		b.WriteByte('\n')
	}
	return writeTemp(t, fmt.Sprintf("wide%d.csv", ncols), b.String())
}

func TestMarkdown_Budget(t *testing.T) {
	tp := profileFile(t, wideTable(t, 60, 3000))
	for _, budget := range []int{0, 3000, 1000, 600} {
		md := tp.Markdown(budget)
		limit := budget
		if limit == 0 {
			limit = DefaultBudget(60)
		}
		if got := Tokens(md); got > limit && budget != 600 {
			t.Errorf("budget %d: %d tokens", budget, got)
		}
		for _, c := range tp.Columns {
			if !strings.Contains(md, c.Name) {
				t.Errorf("budget %d: column %s missing", budget, c.Name)
			}
		}
		if budget == 1000 && !strings.Contains(md, "Cut for budget") {
			t.Errorf("budget 1000: no statement of what was cut")
		}
	}
}

func TestMarkdown_TokenTargets(t *testing.T) {
	for _, tc := range []struct{ cols, max int }{{4, 200}, {15, 550}, {24, 950}, {44, 2700}} {
		tp := profileFile(t, wideTable(t, tc.cols, 2000))
		md := tp.Markdown(0)
		got := Tokens(md)
		t.Logf("%d columns: %d tokens at default budget", tc.cols, got)
		if got > tc.max {
			t.Errorf("%d columns: %d tokens > %d", tc.cols, got, tc.max)
		}
		if tc.cols == 44 {
			md := tp.Markdown(1000)
			if got := Tokens(md); got > 1000 {
				t.Errorf("44 columns at 1000: %d tokens", got)
			}
			for _, c := range tp.Columns {
				if !strings.Contains(md, c.Name) {
					t.Errorf("44 columns at 1000: %s missing", c.Name)
				}
			}
		}
	}
}

func TestRelate(t *testing.T) {
	var cu, or, un strings.Builder
	cu.WriteString("id,name,segment\n")
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&cu, "%d,customer %d,%s\n", i, i, []string{"retail", "smb", "corp"}[i%3])
	}
	or.WriteString("order_id,customer_id,amount\n")
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&or, "%d,%d,%d.%02d\n", 10000+i, 1+(i*37)%450, i%300, i%100)
	}
	un.WriteString("sensor_id,reading\n")
	for i := 1; i <= 800; i++ {
		fmt.Fprintf(&un, "%d,%d\n", i, i%17)
	}
	profiles := map[string]*TableProfile{
		"customers": profileFile(t, writeTemp(t, "customers.csv", cu.String())),
		"orders":    profileFile(t, writeTemp(t, "orders.csv", or.String())),
		"sensors":   profileFile(t, writeTemp(t, "sensors.csv", un.String())),
	}
	rels := Relate(profiles)
	if got, want := len(rels), 1; got != want {
		t.Fatalf("got %d relationships %+v, want %d", got, rels, want)
	}
	r := rels[0]
	if got, want := fmt.Sprintf("%s.%s→%s.%s %s", r.FromSource, r.FromColumn, r.ToSource, r.ToColumn, r.Cardinality),
		"orders.customer_id→customers.id many-to-one"; got != want {
		t.Errorf("relationship = %s, want %s", got, want)
	}
	md := RenderRelationships(rels)
	if !strings.Contains(md, "orders.customer_id → customers.id: many-to-one; 100.0% of values found") {
		t.Errorf("RenderRelationships:\n%s", md)
	}
	// round trip through JSON keeps the join sketch
	var back TableProfile
	js, _ := json.Marshal(profiles["orders"])
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	profiles["orders"] = &back
	if got := len(Relate(profiles)); got != 1 {
		t.Errorf("after JSON round trip: %d relationships", got)
	}
}

func TestSchemaFile(t *testing.T) {
	tp := profileFile(t, "testdata/csv/small.csv")
	f := tp.SchemaFile("file:small.csv", 0)
	want := "---\ntype: schema\nsource: trusted_tool_result\nconfidence: 1\nconnector: \"file:small.csv\"\nrows: 3\nfingerprint: \"" + tp.Fingerprint + "\"\n---\n# small\n"
	if !strings.HasPrefix(f, want) {
		t.Errorf("SchemaFile prefix:\n%s\nwant:\n%s", f, want)
	}
	if !strings.HasPrefix(tp.Fingerprint, "sha256:") {
		t.Errorf("fingerprint %q", tp.Fingerprint)
	}
}

func TestJoinSketchesCSV(t *testing.T) {
	var cu, or strings.Builder
	cu.WriteString("id,name\n")
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&cu, "%d,customer %d\n", i, i)
	}
	or.WriteString("order_id,customer_id,amount\n")
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&or, "%d,%d,%d.%02d\n", 10000+i, 1+(i*37)%1900, i%300, i%100)
	}
	full := map[string]*TableProfile{
		"customers": profileFile(t, writeTemp(t, "customers.csv", cu.String())),
		"orders":    profileFile(t, writeTemp(t, "orders.csv", or.String())),
	}
	want := Relate(full)
	if len(want) != 1 {
		t.Fatalf("relationships from full profiles: %+v", want)
	}
	for _, maxBytes := range []int{0, 8000} {
		back := map[string]*TableProfile{}
		for name, tp := range full {
			data := tp.JoinSketchesCSV(maxBytes)
			if maxBytes > 0 && len(data) > maxBytes {
				t.Errorf("%s: %d bytes > %d", name, len(data), maxBytes)
			}
			p, err := ParseJoinSketchesCSV(name, data)
			if err != nil {
				t.Fatal(err)
			}
			back[name] = p
		}
		got := Relate(back)
		if len(got) != 1 || got[0].FromColumn != "customer_id" || got[0].ToColumn != "id" {
			t.Errorf("maxBytes %d: relationships %+v, want %+v", maxBytes, got, want)
		}
		if maxBytes == 0 && got[0] != want[0] {
			t.Errorf("round trip changed the relationship: %+v, want %+v", got[0], want[0])
		}
	}
	if _, err := ParseJoinSketchesCSV("x", []byte("a,b\n")); err == nil {
		t.Error("bad header accepted")
	}
}
