package scaffold_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/selmem/selmem/internal/browsertest"
	"github.com/selmem/selmem/refresh/scaffold"
)

type snapshot struct {
	Columns []scaffold.Column `json:"columns"`
	Records []map[string]any  `json:"records"`
	Rows    int               `json:"rows"`
}

func loadV1(t *testing.T) snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sales", "v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// enUS formats n as the dashboard does (en-US, at most two decimals).
func enUS(n float64) string {
	s := strconv.FormatFloat(math.Round(n*100)/100, 'f', -1, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// render serves the dashboard generated for cols with snap injected,
// waits until it has rendered, and returns the tab.
func render(t *testing.T, b *browsertest.Browser, cols []scaffold.Column, snap snapshot) *browsertest.Page {
	t.Helper()
	files, err := scaffold.Dashboard("Weekly sales", cols)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	srv := browsertest.ServeArtifact(t, files, data)
	p := b.NewPage(t)
	p.Navigate(srv.URL + "/")
	p.WaitFor(`document.body.getAttribute("data-state") !== "loading"`)
	if v := p.Violations(); len(v) != 0 {
		t.Errorf("CSP violations: %+v", v)
	}
	for _, m := range p.Console() {
		if m.IsException() {
			t.Errorf("uncaught exception: %s", m)
		}
	}
	return p
}

// TestDashboard_Browser renders generated dashboards in headless Chromium
// under the artifact CSP and reads what they show.
func TestDashboard_Browser(t *testing.T) {
	b := browsertest.New(t)
	v1 := loadV1(t)

	t.Run("new data, same program", func(t *testing.T) {
		// Version 2: rows shuffled, amounts changed by up to ±15%, one
		// more column. The program is unchanged; what it shows follows.
		v2 := snapshot{Columns: append(append([]scaffold.Column(nil), v1.Columns...), scaffold.Column{Name: "channel", Type: "text"})}
		rng := rand.New(rand.NewPCG(1, 2))
		var total float64
		byRegion := map[string]float64{}
		for _, i := range rng.Perm(len(v1.Records)) {
			r := map[string]any{"channel": "web"}
			for k, v := range v1.Records[i] {
				r[k] = v
			}
			if a, ok := r["amount"].(float64); ok {
				a = math.Round(a*(0.85+0.3*rng.Float64())*100) / 100
				r["amount"] = a
				total += a
				byRegion[r["region"].(string)] += a
			}
			v2.Records = append(v2.Records, r)
		}
		v2.Rows = len(v2.Records)
		lead, leadV := "", -1.0
		for k, v := range byRegion {
			if v > leadV {
				lead, leadV = k, v
			}
		}
		p := render(t, b, v1.Columns, v2)
		if got, want := p.Text("#total"), enUS(total); got != want {
			t.Errorf("#total = %q, want %q", got, want)
		}
		wantInsight := lead + " leads with " + strconv.Itoa(int(math.Round(leadV/total*100))) + "% of amount"
		if got := p.Text("#insight"); !strings.HasPrefix(got, wantInsight) {
			t.Errorf("#insight = %q, want it to start with %q", got, wantInsight)
		}
	})

	t.Run("bound column missing", func(t *testing.T) {
		v3 := snapshot{Rows: v1.Rows}
		for _, c := range v1.Columns {
			if c.Name != "region" {
				v3.Columns = append(v3.Columns, c)
			}
		}
		for _, r := range v1.Records {
			c := map[string]any{}
			for k, v := range r {
				if k != "region" {
					c[k] = v
				}
			}
			v3.Records = append(v3.Records, c)
		}
		p := render(t, b, v1.Columns, v3)
		if got := Eval(t, p, `document.body.getAttribute("data-state")`); got != "error" {
			t.Errorf("state %q, want error", got)
		}
		if got := p.Text("#error"); !strings.Contains(got, `"region"`) || !strings.Contains(got, "regenerated") {
			t.Errorf("#error = %q, want it to name the column and ask for regeneration", got)
		}
		if got := p.Text("#total"); got != "–" {
			t.Errorf("#total = %q, want no number", got)
		}
	})

	t.Run("count by category", func(t *testing.T) {
		cols := []scaffold.Column{{Name: "region", Type: "text"}}
		p := render(t, b, cols, v1)
		got := p.Texts("#rows", "#total", "#insight")
		if got["#rows"] != "12" || got["#total"] != "12" ||
			got["#insight"] != "EMEA leads with 33% of rows, ahead of AMER (25%), across 5 region values." {
			t.Errorf("got %v", got)
		}
		if n := browsertest.Eval[int](p, `document.querySelectorAll("#chart rect.bar").length`); n != 5 {
			t.Errorf("%d bars, want 5 (four regions and blank)", n)
		}
	})

	t.Run("no category", func(t *testing.T) {
		cols := []scaffold.Column{{Name: "amount", Type: "number"}}
		p := render(t, b, cols, v1)
		if got, want := p.Text("#insight"), "The average amount is 972.27 across 11 rows."; got != want {
			t.Errorf("#insight = %q, want %q", got, want)
		}
		if got := p.Text("#chart"); got != "No category column to chart." {
			t.Errorf("#chart = %q", got)
		}
	})

	t.Run("hostile values stay text", func(t *testing.T) {
		evil := `<img src=x onerror="document.title='pwned'">`
		snap := snapshot{
			Columns: []scaffold.Column{{Name: "region", Type: "text"}, {Name: "amount", Type: "number"}},
			Records: []map[string]any{{"region": evil, "amount": 5}, {"region": "</script><b>x</b>", "amount": -2}},
			Rows:    2,
		}
		p := render(t, b, snap.Columns, snap)
		if n := browsertest.Eval[int](p, `document.querySelectorAll("img, b").length`); n != 0 {
			t.Errorf("%d injected elements in the page", n)
		}
		if got := Eval(t, p, `document.querySelector("#chart .bar-label").textContent`); got != evil {
			t.Errorf("first bar label %q, want the value as text", got)
		}
		if got := p.Text("#insight"); !strings.HasPrefix(got, evil+" leads with 5 amount") {
			t.Errorf("#insight = %q (negative values: no percentages)", got)
		}
	})

	t.Run("many categories", func(t *testing.T) {
		snap := snapshot{Columns: []scaffold.Column{{Name: "sku", Type: "text"}, {Name: "qty", Type: "integer"}}}
		for i := range 25 {
			snap.Records = append(snap.Records, map[string]any{"sku": "S" + strconv.Itoa(i), "qty": i + 1})
		}
		snap.Rows = len(snap.Records)
		p := render(t, b, snap.Columns, snap)
		labels := browsertest.Eval[[]string](p, `Array.from(document.querySelectorAll("#chart .bar-label"), e => e.textContent)`)
		if len(labels) != 11 || labels[0] != "S24" || labels[10] != "(15 more)" {
			t.Errorf("bar labels %q, want the top ten then (15 more)", labels)
		}
		if got := p.Text("#total"); got != "325" {
			t.Errorf("#total = %q, want 325", got)
		}
	})
}

// Eval evaluates a string expression in p.
func Eval(t *testing.T, p *browsertest.Page, expr string) string {
	t.Helper()
	return browsertest.Eval[string](p, expr)
}
