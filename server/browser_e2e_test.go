package server_test

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/browsertest"
	"github.com/selmem/selmem/internal/egress/egresstest"
)

// saleRow is one row of the browser test's data set.
type saleRow struct {
	region, product string
	amount          float64
	units           int
}

// salesV1 is version 1 of the data: 240 orders over four regions.
func salesV1() []saleRow {
	r := rand.New(rand.NewPCG(1, 2))
	regions := []string{"EMEA", "AMER", "APAC", "LATAM"}
	weights := []int{5, 3, 2, 1} // distinct shares, so the leader is clear
	var rows []saleRow
	for i := range 240 {
		reg := 0
		for k := r.IntN(11); k >= weights[reg]; reg++ {
			k -= weights[reg]
		}
		rows = append(rows, saleRow{regions[reg], []string{"basic", "pro", "team"}[i%3], float64(1000+r.IntN(90000)) / 100, 1 + r.IntN(9)})
	}
	return rows
}

// salesV2 shuffles v1's rows and changes every amount by up to ±15%.
func salesV2(v1 []saleRow) []saleRow {
	r := rand.New(rand.NewPCG(3, 4))
	rows := append([]saleRow(nil), v1...)
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	for i := range rows {
		rows[i].amount = math.Round(rows[i].amount*(0.85+0.3*r.Float64())*100) / 100
	}
	return rows
}

func salesCSV(rows []saleRow, channel bool) string {
	var b strings.Builder
	b.WriteString("region,product,amount,units")
	if channel {
		b.WriteString(",channel")
	}
	b.WriteString("\n")
	for i, row := range rows {
		fmt.Fprintf(&b, "%s,%s,%.2f,%d", row.region, row.product, row.amount, row.units)
		if channel {
			b.WriteString([]string{",web", ",store"}[i%2])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// jsFormat formats n as the dashboard does: en-US grouping, no fraction
// digits for whole numbers, else at most two.
func jsFormat(n float64) string {
	digits := 2
	if n == math.Trunc(n) {
		digits = 0
	}
	s := strconv.FormatFloat(n, 'f', digits, 64)
	if digits > 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var g []string
	for len(intPart) > 3 {
		g = append([]string{intPart[len(intPart)-3:]}, g...)
		intPart = intPart[:len(intPart)-3]
	}
	out := strings.Join(append([]string{intPart}, g...), ",")
	if frac != "" {
		out += "." + frac
	}
	return out
}

// expectDashboard is what the scaffolded dashboard shows for rows: the row
// count, the total of amount, and the insight sentence.
func expectDashboard(rows []saleRow) (count, total, insight string) {
	sum := map[string]float64{}
	var all float64
	for _, r := range rows {
		sum[r.region] += r.amount
		all += r.amount
	}
	all = math.Round(all*100) / 100
	regions := make([]string, 0, len(sum))
	for k := range sum {
		regions = append(regions, k)
	}
	sort.Slice(regions, func(i, j int) bool { return sum[regions[i]] > sum[regions[j]] })
	pct := func(v float64) int { return int(math.Round(v / all * 100)) }
	insight = fmt.Sprintf("%s leads with %d%% of amount, ahead of %s (%d%%), across %d region values.",
		regions[0], pct(sum[regions[0]]), regions[1], pct(sum[regions[1]]), len(regions))
	return strconv.Itoa(len(rows)), jsFormat(all), insight
}

// TestBrowser_ArtifactRefresh is the artifact's life as a user sees it, in
// headless Chromium: a scaffolded dashboard renders version 1 of the data;
// after refresh_artifact with version 2 (rows shuffled, amounts ±15%, one
// more column) it shows version 2's totals and insight; version 3 (the
// bound amount column gone) is refused and changes nothing; and the page
// cannot reach another origin.
func TestBrowser_ArtifactRefresh(t *testing.T) {
	browsertest.Require(t)
	home, root := t.TempDir(), t.TempDir()
	v1 := salesV1()
	v2 := salesV2(v1)
	write := func(name, content string, age time.Duration) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		os.Chtimes(p, at, at)
	}
	write("sales-w1.csv", salesCSV(v1, false), 3*time.Hour)
	envs := []string{"SELMEM_PROFILE_DATA_ROOTS=" + root, "SELMEM_REFRESH_WATCH=false"}
	cli := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(env(home), envs...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("selmem %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	cli("kind: file\npath: "+root+"/sales-*.csv\n", "create", "/memories/workspaces/demo/tools/weekly.yaml")
	cli("", "artifact", "init", "demo", "dash", "--source", "weekly", "--title", "Weekly sales")

	h := startHTTP(t, home, envs...)
	cs := connectHTTP(t, h.url, eras[1])
	page := browsertest.New(t).NewPage(t)
	url := h.base + "/artifacts/demo/dash/"
	show := func() (string, string, string) {
		t.Helper()
		page.Navigate(url)
		page.WaitFor(`document.body.getAttribute("data-state") === "ready"`)
		got := page.Texts("#rows", "#total", "#insight")
		return got["#rows"], got["#total"], got["#insight"]
	}
	check := func(version string, rows []saleRow) {
		t.Helper()
		wantRows, wantTotal, wantInsight := expectDashboard(rows)
		gotRows, gotTotal, gotInsight := show()
		if gotRows != wantRows || gotTotal != wantTotal || gotInsight != wantInsight {
			t.Errorf("%s: the page shows rows %q total %q insight %q; want %q %q %q", version, gotRows, gotTotal, gotInsight, wantRows, wantTotal, wantInsight)
		}
	}
	check("version 1", v1)

	write("sales-w2.csv", salesCSV(v2, true), 2*time.Hour)
	text, sc, isErr := call(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"})
	if isErr || sc["outcome"] != "refreshed" || !strings.Contains(toJSON(sc["columns_added"]), "channel") {
		t.Fatalf("refresh with version 2: %s %v", text, sc)
	}
	check("version 2", v2)

	before := commits(t, home)
	data := func() string {
		resp, err := http.Get(url + "data.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	data2 := data()
	write("sales-w3.csv", strings.ReplaceAll(salesCSV(v2, true), ",amount,", ",price,"), time.Hour)
	text, sc, _ = call(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"})
	if sc["outcome"] != "incompatible" || !strings.Contains(toJSON(sc["missing_columns"]), "amount") {
		t.Fatalf("refresh with version 3: %s %v", text, sc)
	}
	if got := commits(t, home); got != before {
		t.Errorf("the refused refresh made %d commits", got-before)
	}
	if data() != data2 {
		t.Error("the refused refresh changed the served data")
	}
	check("after the refused version 3", v2)

	// The page may read its own data.json but nothing of another origin.
	other := egresstest.NewRecorder(t, nil)
	if n := browsertest.Eval[float64](page, `fetch("data.json").then(r => r.json()).then(d => d.rows)`); int(n) != len(v2) {
		t.Errorf("same-origin data.json: rows %v", n)
	}
	res, err := browsertest.EvalErr[string](page, `fetch("`+other.URL+`/steal").then(() => "reached", e => "blocked: " + e.name)`)
	if err != nil || !strings.HasPrefix(res, "blocked") {
		t.Errorf("fetch to another origin: %q, %v", res, err)
	}
	page.WaitViolation(func(v browsertest.Violation) bool { return v.EffectiveDirective == "connect-src" })
	if n := len(other.Requests()); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
}
