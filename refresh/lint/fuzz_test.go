package lint

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzProgram feeds arbitrary HTML and JavaScript to Program and checks
// that it returns, that every finding points at a line of a file it was
// given, and that no message carries a long value from the data.
func FuzzProgram(f *testing.F) {
	f.Add(page(`<main><p id="total"></p><svg id="chart"></svg></main><script src="app.js"></script>`),
		"var d = JSON.parse(document.getElementById(\"selmem-data\").textContent);\nvar t = d.records.reduce(function (s, r) { return s + r.amount; }, 0);\n")
	f.Add(page(`<p>EMEA 10,695</p><svg><text>APAC</text></svg>`), "var t = `${a}EMEA${`x${1520.5}`}`; /re/g.test('1520.5') // c\n/* 10695")
	f.Add("<script>'unterminated\n</script><script type=application/json id=selmem-data>{}", "a = /[/]/ / 2; b = 0x1F + 1_520.5e0 + 10695n; '\\u{1F600}\\x4' `")
	f.Add("<p onclick=\"f('EMEA')\" data-v='1,520.50'>", "}}}{{{`${`${")
	long := strings.Repeat("Long category value ", 4)
	snap := Snapshot{
		Columns: []Column{{"region", "text"}, {"amount", "number"}, {"day", "date"}},
		Records: []map[string]any{
			{"region": "EMEA", "amount": 1520.5, "day": "2026-11-02"},
			{"region": "APAC", "amount": 9174.5, "day": "2026-11-03"},
			{"region": long, "amount": 77.25, "day": nil},
		},
	}
	f.Fuzz(func(t *testing.T, html, js string) {
		in := map[string]string{"index.html": html, "app.js": js, "chart.svg": html, "data.json": js}
		for _, fd := range Program(in, snap) {
			src, ok := in[fd.File]
			if !ok {
				t.Fatalf("finding for unknown file %q", fd.File)
			}
			if lines := strings.Count(src, "\n") + 1; fd.Line < 1 || fd.Line > lines {
				t.Fatalf("finding %v: line outside 1..%d", fd, lines)
			}
			if fd.Message == "" || !utf8.ValidString(fd.Message) {
				t.Fatalf("finding %v: empty or invalid message", fd)
			}
			if strings.Contains(fd.Message, long) {
				t.Fatalf("finding %v echoes a long value", fd)
			}
		}
	})
}
