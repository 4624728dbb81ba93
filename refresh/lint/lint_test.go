package lint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// salesV1 loads the shared sales fixture (testdata/sales/v1.json).
func salesV1(t testing.TB) Snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sales", "v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// page wraps body in an index.html that has its injection point.
func page(body string) string {
	return "<!doctype html>\n<html><head><title>Sales</title></head>\n<body>\n" + body +
		"\n" + `<script type="application/json" id="selmem-data"></script>` + "\n</body></html>\n"
}

type wantF struct {
	file string
	line int
	kind Kind
	col  string
}

func TestProgram(t *testing.T) {
	snap := salesV1(t)
	tests := []struct {
		name  string
		files map[string]string
		want  []wantF
	}{
		{
			name: "hardcoded total and region",
			files: map[string]string{
				"index.html": page(`<div id="total">10,695</div>
<p id="insight">EMEA leads with 48% of amount.</p>
<script src="app.js"></script>`),
				"app.js": `var data = JSON.parse(document.getElementById("selmem-data").textContent);
var total = 10695.00;
if (top === "EMEA") { show(5116.75); }
`,
			},
			want: []wantF{
				{"app.js", 2, KindAggregate, "amount"},
				{"app.js", 3, KindCategory, "region"},
				{"app.js", 3, KindAggregate, "amount"},
				{"index.html", 4, KindAggregate, "amount"},
				{"index.html", 5, KindCategory, "region"},
			},
		},
		{
			name: "values copied into code",
			files: map[string]string{
				"index.html": page(`<script>
const amounts = [1520.5, 830.25];
const days = ["2026-11-02"];
el.textContent = ` + "`${n} orders in APAC`" + `;
</script>`),
			},
			want: []wantF{
				{"index.html", 5, KindNumber, "amount"},
				{"index.html", 5, KindNumber, "amount"},
				{"index.html", 6, KindDate, "day"},
				{"index.html", 7, KindCategory, "region"},
			},
		},
		{
			name: "layout, labels, years, comments and column names are quiet",
			files: map[string]string{
				"index.html": page(`<style>.bar { width: 1210px; height: 12px }</style>
<h1>EMEA and APAC sales 2026</h1>
<svg viewBox="0 0 1210 642"><rect x="12" width="1210" height="830.25"/></svg>
<p style="margin: 15px">Sales by region and amount, 2026</p>
<!-- EMEA 10695 -->`),
				"app.js": `// EMEA had 10695 last week
/* APAC 1520.5 */
var CHART_WIDTH = 1210, BAR_HEIGHT = 15;
el.setAttribute("width", 1210);
el.style.width = "1210px";
svg.setAttribute("transform", "translate(1210, 15)");
var pct = Math.round(share * 100);
var cols = ["region", "amount"];
var re = /EMEA|APAC/g;
var color = "#1210aa";
`,
				"style.css": ".x { width: 10695px }",
			},
		},
		{
			name: "attributes",
			files: map[string]string{
				"index.html": page(`<span data-total="10695" title="orders">x</span>
<button onclick="pick('LATAM')">pick</button>`),
			},
			want: []wantF{
				{"index.html", 4, KindAggregate, "amount"},
				{"index.html", 5, KindCategory, "region"},
			},
		},
		{
			name: "svg text",
			files: map[string]string{
				"index.html": page(""),
				"chart.svg":  `<svg xmlns="http://www.w3.org/2000/svg"><text x="1210" y="15">AMER</text></svg>`,
			},
			want: []wantF{{"chart.svg", 1, KindCategory, "region"}},
		},
		{
			name:  "embedded data file",
			files: map[string]string{"index.html": page(""), "data.json": `[{"region":"EMEA","amount":1520.5}]`},
			want:  []wantF{{"data.json", 1, KindCategory, "region"}, {"data.json", 1, KindNumber, "amount"}},
		},
		{
			name:  "no injection point",
			files: map[string]string{"index.html": "<html><body><p>hi</p></body></html>"},
			want:  []wantF{{"index.html", 1, KindInjection, ""}},
		},
		{
			name: "filled and repeated injection point",
			files: map[string]string{"index.html": `<html><body>
<script type="application/json" id="selmem-data">{"records":[]}</script>
<script type="text/javascript" id="selmem-data"></script>
</body></html>`},
			want: []wantF{{"index.html", 1, KindInjection, ""}, {"index.html", 2, KindInjection, ""}, {"index.html", 3, KindInjection, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Program(tt.files, snap)
			var g []wantF
			for _, f := range got {
				g = append(g, wantF{f.File, f.Line, f.Kind, f.Column})
				if f.Message == "" {
					t.Errorf("finding %+v has no message", f)
				}
			}
			if !sameFindings(g, tt.want) {
				t.Errorf("findings:\n%s\nwant (file, line, kind, column):\n%v", dump(got), tt.want)
			}
		})
	}
}

// sameFindings compares findings ignoring the order within one line.
func sameFindings(got, want []wantF) bool {
	if len(got) != len(want) {
		return false
	}
	count := map[wantF]int{}
	for _, w := range want {
		count[w]++
	}
	for _, g := range got {
		count[g]--
		if count[g] < 0 {
			return false
		}
	}
	return true
}

func dump(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + f.String() + " [" + f.Column + "]\n")
	}
	return b.String()
}

func TestProgram_LongValuesNotEchoed(t *testing.T) {
	long := "Department of Extremely Long Category Names and Other Things"
	snap := Snapshot{
		Columns: []Column{{"dept", "text"}, {"cost", "number"}},
		Records: []map[string]any{{"dept": long, "cost": 1234.5}, {"dept": "HR", "cost": 99.5}},
	}
	got := Program(map[string]string{"app.js": "var d = '" + long + "';\nvar c = 123456789012345678901234567890123456.5;"}, snap)
	if len(got) != 1 {
		t.Fatalf("findings:\n%s\nwant 1", dump(got))
	}
	if strings.Contains(got[0].Message, "Extremely") || !strings.Contains(got[0].Message, "60-character") {
		t.Errorf("message %q echoes a long value or does not describe it", got[0].Message)
	}
}

func TestProgram_Untyped(t *testing.T) {
	// Records built in Go, columns without types.
	snap := Snapshot{
		Columns: []Column{{Name: "city"}, {Name: "visits"}},
		Records: []map[string]any{{"city": "Lisbon", "visits": int64(4321)}, {"city": "Porto", "visits": json.Number("87")}},
	}
	got := Program(map[string]string{"app.js": `show("Porto", 4321)`}, snap)
	if len(got) != 2 || got[0].Kind != KindCategory && got[1].Kind != KindCategory {
		t.Errorf("findings:\n%s\nwant a category and a number", dump(got))
	}
}

func TestProgram_MaxFindings(t *testing.T) {
	snap := salesV1(t)
	var b strings.Builder
	for i := 0; i < 3*MaxFindings; i++ {
		b.WriteString("show(10695);\n")
	}
	if got := Program(map[string]string{"a.js": b.String()}, snap); len(got) != MaxFindings {
		t.Errorf("%d findings, want MaxFindings (%d)", len(got), MaxFindings)
	}
}

func TestIsLayoutName(t *testing.T) {
	for name, want := range map[string]bool{
		"CHART_WIDTH": true, "fontSize": true, "stroke-width": true, "viewBox": true, "setTimeout": true,
		"x": true, "BAR_GAP": true, "total": false, "topRegion": false, "amounts": false, "": false, "data-x": true,
	} {
		if got := isLayoutName(name); got != want {
			t.Errorf("isLayoutName(%q) = %v, want %v", name, got, want)
		}
	}
}
