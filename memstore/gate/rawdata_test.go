package gate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// rows returns n lines made by row(i), after header (none when "").
func rows(header string, n int, row func(i int) string) string {
	var b strings.Builder
	if header != "" {
		b.WriteString(header + "\n")
	}
	for i := range n {
		b.WriteString(row(i) + "\n")
	}
	return b.String()
}

// prettyRecords returns a JSON document {"items": [...]} holding n
// objects made by obj(i), one field a line.
func prettyRecords(n int, obj func(i int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = strings.ReplaceAll(obj(i), ", \"", ",\n      \"")
	}
	return "{\n  \"items\": [\n    " + strings.Join(items, ",\n    ") + "\n  ]\n}\n"
}

// prettyJSON returns a JSON array of n records, indented two spaces a
// level, as json.MarshalIndent and jq write them.
func prettyJSON(n int) string {
	var b strings.Builder
	b.WriteString("[\n")
	for i := range n {
		fmt.Fprintf(&b, "  {\n    \"day\": \"2024-01-%02d\",\n    \"value\": %d.5,\n    \"count\": %d\n  }", 1+i%28, i, i)
		if i < n-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	return b.String()
}

func TestIsDataRow(t *testing.T) {
	for in, want := range map[string]bool{
		"- 2024-01-03, 45.2, 12, ok":             true,
		"2024-01-03, 45.2, 12, ok.":              true,
		"* 17 | Acme Corp | Berlin | 4500.00":    true,
		"- id=1, amount=45.20, day=2024-01-03":   true,
		"- date: 2024-01-03; value: 45.2; n: 12": true,
		"- Use UTC, not local time, in reports.": false,
		"- c1: integer; 250 distinct; 0..999":    false,
		"- alice, bob, carol, dave":              false, // no values
		"- v1.4.0, 2024-01-03, fixes tz parsing": false, // prose
		"- red, green":                           false,
		"2024-01-03   45.2   12   ok":            true,
		"Step 12 takes 5 minutes and 2 people":   false,
		"go 1.22":                                false,
	} {
		d, _ := delimiters([]byte(in))
		if d == 0 {
			d = ' '
		}
		if got := isDataRow([]byte(in), d); got != want {
			t.Errorf("isDataRow(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestIsKeyedRow(t *testing.T) {
	for in, want := range map[string]bool{
		"1042,2026-03-01 09:12,open,cannot log in, link expired": true,
		"C-0300,Alice Smith,Berlin,call first":                   true,
		"alice@example.com,support@example.com,Re: invoice":      true,
		`"1042","open","a, b"`:                                   true,
		"TCK-5000;open;slow; worse on Mondays":                   true,
		"The export, which runs nightly, writes a file":          false,
		"2024, the year we moved, again":                         false, // words after the key
		"However, it ran, twice":                                 false, // a word first
		"1042":                                                   false, // one field
	} {
		d, _ := delimiters([]byte(in))
		if got := isKeyedRow([]byte(in), d); got != want {
			t.Errorf("isKeyedRow(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestRecordProfile_IsConfigList(t *testing.T) {
	profile := func(n int, rec func(i int) map[string]string) *recordProfile {
		var p recordProfile
		for i := range n {
			for k, v := range rec(i) {
				p.add(k, []byte(v))
			}
			p.records++
		}
		return &p
	}
	for _, tc := range []struct {
		name string
		p    *recordProfile
		want bool
	}{
		{"flags", profile(120, func(i int) map[string]string {
			return map[string]string{"name": fmt.Sprintf("flag-%d", i), "enabled": "true", "owner": fmt.Sprintf("team-%d", i%8)}
		}), true},
		{"redirects", profile(120, func(i int) map[string]string {
			return map[string]string{"from": fmt.Sprintf("/old/%d", i), "to": fmt.Sprintf("/new/%d", i), "code": "301"}
		}), true},
		{"orders", profile(120, func(i int) map[string]string {
			return map[string]string{"id": fmt.Sprint(i), "amount": fmt.Sprintf("%d.5", i)}
		}), false},
		{"events", profile(120, func(i int) map[string]string {
			return map[string]string{"user": fmt.Sprintf("u%d", i), "at": fmt.Sprintf("2026-03-01T10:%02d:00+01:00", i%60)}
		}), false},
		{"contacts", profile(120, func(i int) map[string]string {
			return map[string]string{"name": fmt.Sprintf("Alice Smith%d", i), "email": fmt.Sprintf("a%d@example.com", i)}
		}), false},
		{"three names", profile(120, func(i int) map[string]string {
			return map[string]string{"a": fmt.Sprintf("a%d", i), "b": fmt.Sprintf("b%d", i), "c": fmt.Sprintf("c%d", i)}
		}), false},
		{"identical records", profile(120, func(i int) map[string]string {
			return map[string]string{"id": "1", "total": "2.5"}
		}), false},
		{"none", &recordProfile{}, false},
		{"unread", &recordProfile{records: 1, unread: true}, false},
	} {
		if got := tc.p.isConfigList(); got != tc.want {
			t.Errorf("%s: isConfigList() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestContent_RawData(t *testing.T) {
	csvRow := func(i int) string {
		return fmt.Sprintf("%d,customer %d,%d.%02d,2024-01-%02d", i, i, i*3, i%100, 1+i%28)
	}
	sketches := rows("column,type,unique,distinct,exact,hashes", 150, func(i int) string {
		return fmt.Sprintf("c%d,integer,false,%d,true,%016x %016x", i, 200+i, i*7919, i*104729)
	})
	wideProfile := "# wide\n300 rows × 150 columns\n\n" + rows("", 150, func(i int) string {
		return fmt.Sprintf("- c%d: integer; %d distinct; 0..999; mean 500 sd 290", i, 250+i%9)
	})
	for _, tc := range []struct {
		name, rel, content string
		line               int // 0: accepted; -1: refused, with no line
	}{
		{"csv", "data/orders.csv", rows("id,name,amount,day", 120, csvRow), 1},
		{"csv under the threshold", "data/orders.csv", rows("id,name,amount,day", 98, csvRow), 0},
		{"csv in markdown", "notes/orders.md", "# Orders\n\nAs exported:\n\n" + rows("", 100, csvRow), 5},
		{"tsv", "notes/t.txt", rows("", 100, func(i int) string { return fmt.Sprintf("%d\t%d\t%d", i, i*2, i*3) }), 1},
		{"quoted commas", "data/q.csv", rows("", 100, func(i int) string { return fmt.Sprintf(`%d,"Smith, J.",%d`, i, i) }), 1},
		{"markdown table", "notes/t.md", rows("| id | name | total |\n|---|---|---|", 110, func(i int) string { return fmt.Sprintf("| %d | n%d | %d |", i, i, i*5) }), 1},
		{"json lines", "notes/r.txt", rows("", 100, func(i int) string { return fmt.Sprintf(`{"id": %d, "name": "n%d"}`, i, i) }), 1},
		{"json array of records", "tools/r.json", "[\n" + rows("", 100, func(i int) string { return fmt.Sprintf(`  {"id": %d, "ok": true},`, i) }) + `  {"id": 100, "ok": true}` + "\n]\n", 2},
		{"sql inserts", "notes/seed.md", rows("", 100, func(i int) string { return fmt.Sprintf("INSERT INTO t VALUES (%d, 'n%d', %d);", i, i, i) }), 1},
		{"inline data in an artifact", "artifacts/app/data.js", "const rows = [\n" + rows("", 100, func(i int) string { return fmt.Sprintf("  [%d, %d, %d],", i, i*2, i*3) }) + "];\n", 2},
		{"tables apart", "notes/ref.md", strings.Repeat("## Codes\n\n"+rows("| code | name |\n|---|---|", 40, func(i int) string { return fmt.Sprintf("| C%d | name %d |", i, i) })+"\n", 3), 0},
		{"prose", "notes/p.md", rows("", 200, func(i int) string { return fmt.Sprintf("Line %d says one thing, then another, in words.", i) }), 0},
		{"join sketches", "workspaces/w/schemas/wide.joins.csv", sketches, 0},
		{"forged join sketches", "workspaces/w/schemas/x.joins.csv", strings.Replace(sketches, "0000000000000000", "alice@example.com", 1), 1},
		{"wide profile", "workspaces/w/schemas/wide.md", wideProfile, 0},
		{"pretty json records", "tools/dump.json", prettyRecords(120, func(i int) string {
			return fmt.Sprintf(`{"id": %d, "name": "n%d", "total": %d.5}`, i, i, i)
		}), 3},
		{"bulleted rows", "notes/d.md", rows("", 120, func(i int) string { return "- " + csvRow(i) }), 1},
		{"rows ending in a full stop", "notes/d.md", rows("", 120, func(i int) string { return csvRow(i) + "." }), 1},
		{"bulleted key=value rows", "notes/d.md", rows("", 120, func(i int) string {
			return fmt.Sprintf("- id=%d, amount=%d.50, day=2024-01-%02d", i, i, 1+i%28)
		}), 1},
		{"pretty json in a fenced block", "notes/dump.md", "# Dump\n\n```json\n" + prettyJSON(120) + "```\n", 5},
		{"pretty json in yaml", "tools/dump.yaml", "items:\n" + prettyJSON(120), 3},
		{"compact json in a fenced block", "notes/dump.md", "```json\n[" + strings.Repeat(`{"id": 1, "total": 2.5}, `, 119) + `{"id": 1, "total": 2.5}]` + "\n```\n", 2},
		{"yaml records", "tools/rows.yaml", "rows:\n" + rows("", 120, func(i int) string {
			return fmt.Sprintf("  - day: 2024-01-%02d\n    value: %d.5\n    count: %d", 1+i%28, i, i)
		}), 2},
		{"columns aligned with blanks", "notes/d.md", rows("", 120, func(i int) string {
			return fmt.Sprintf("2024-01-%02d   %8d.5   %5d   ok", 1+i%28, i, i)
		}), 1},
		{"prose with numbers", "notes/steps.md", rows("", 150, func(i int) string {
			return fmt.Sprintf("Step %d takes 5 minutes and 2 people", i)
		}), 0},
		{"prose bullets with commas", "notes/rules.md", rows("", 150, func(i int) string {
			return fmt.Sprintf("- Rule %d: use UTC, not local time, for report %d.", i, i)
		}), 0},
		{"changelog bullets", "notes/changes.md", rows("", 150, func(i int) string {
			return fmt.Sprintf("- v1.%d.0, 2024-01-%02d, fixes timezone parsing in exports", i, 1+i%28)
		}), 0},
		{"yaml glossary", "notes/terms.yaml", "glossary:\n" + rows("", 150, func(i int) string {
			return fmt.Sprintf("  - term: T%d\n    meaning: the thing number %d that we track", i, i)
		}), 0},
		{"one-field bullets", "notes/owners.md", rows("", 150, func(i int) string { return fmt.Sprintf("- Owner: person %d", i) }), 0},
		{"yaml config with nested values", "tools/tools.yaml", "tools:\n" + rows("", 150, func(i int) string {
			return fmt.Sprintf("  - name: tool%d\n    kind: http\n    params:\n      - region", i)
		}), 0},
		{"compact json array", "tools/dump.json", "[" + strings.TrimSuffix(strings.ReplaceAll(rows("", 120, func(i int) string {
			return fmt.Sprintf(`{"id":%d,"total":%d}`, i, i)
		}), "\n", ","), ",") + "]", -1},
		{"nested json config", "tools/routes.json", prettyRecords(120, func(i int) string {
			return fmt.Sprintf(`{"path": "/r%d", "methods": ["GET"], "auth": {"role": "reader"}}`, i)
		}), 0},
		{"ragged csv", "data/orders.csv", rows("id,name,amount,day,region,tier", 120, func(i int) string {
			return csvRow(i) + strings.Repeat(",EU", 1+i%3)
		}), 1},
		{"ragged csv in markdown", "notes/orders.md", "# Orders\n\n" + rows("", 110, func(i int) string {
			return csvRow(i) + strings.Repeat(",x", i%3)
		}), 3},
		{"ragged tsv", "notes/t.txt", rows("", 110, func(i int) string {
			return strings.Repeat(fmt.Sprintf("%d\t", i), 4+i%3) + "ok"
		}), 1},
		{"ragged csv of 10 lines", "notes/orders.md", rows("", 10, func(i int) string {
			return csvRow(i) + strings.Repeat(",EU", 1+i%3)
		}), 0},
		{"prose with a few commas a line", "notes/p.md", rows("", 150, func(i int) string {
			return []string{"The export, which runs nightly, writes a file", "to the bucket, and the loader, in turn, picks it",
				"up at six, checks it, and sends a summary"}[i%3]
		}), 0},
		{"csv split over fenced blocks", "notes/dump.md", strings.Repeat("Part:\n\n```csv\n"+rows("id,name,amount,day", 40, csvRow)+"```\n\n", 3), 4},
		{"pretty json split over fenced blocks", "notes/dump.md", strings.Repeat("Batch:\n```json\n"+prettyJSON(40)+"```\n", 3), 4},
		{"compact json split over fenced blocks", "notes/dump.md", strings.Repeat("Batch:\n```json\n["+strings.Repeat(`{"id": 1, "total": 2.5}, `, 39)+`{"id": 1, "total": 2.5}]`+"\n```\n", 3), 3},
		{"yaml records split over fenced blocks", "notes/dump.md", strings.Repeat("Batch:\n```yaml\nrows:\n"+rows("", 40, func(i int) string {
			return fmt.Sprintf("  - day: 2024-01-%02d\n    value: %d.5\n    count: %d", 1+i%28, i, i)
		})+"```\n", 3), 4},
		{"json lines split over fenced blocks", "notes/dump.md", strings.Repeat("Batch:\n```\n"+rows("", 30, func(i int) string {
			return fmt.Sprintf(`{"id": %d, "name": "n%d"}`, i, i)
		})+"```\n", 4), 3},
		{"small examples in many fenced blocks", "notes/api.md", strings.Repeat("Example:\n```json\n{\"id\": 1, \"status\": \"ok\"}\n```\n", 30), 0},
		{"code in many fenced blocks", "notes/howto.md", strings.Repeat("Step:\n```go\nx, y := f(a, b)\nreturn x\n```\n", 60), 0},
		{"fenced blocks of different records", "notes/api.md", strings.Repeat("```json\n"+prettyJSON(40)+"```\n```json\n"+prettyRecords(40, func(i int) string {
			return fmt.Sprintf(`{"id": %d, "name": "n%d"}`, i, i)
		})+"```\n", 1), 0},
		{"tickets with free text", "data/tickets.csv", rows("id,created,status,note", 110, func(i int) string {
			return fmt.Sprintf("%d,2026-03-%02d,open,%s", 1000+i, 1+i%28, []string{"cannot log in, says the link expired",
				"export is empty", "totals differ, again, from finance.", "asks for access"}[i%4])
		}), 1},
		{"tickets with free text and ; delimiters", "notes/t.md", rows("", 105, func(i int) string {
			return fmt.Sprintf("TCK-%d;open;%s", 1000+i, []string{"slow, worse on Mondays, and at month end", "fine"}[i%2])
		}), 2}, // the first row alone reads as split at its commas
		{"csv with line breaks in quoted fields", "data/tickets.csv", rows("id,created,status,note", 110, func(i int) string {
			note := `"export is empty"`
			if i%3 == 0 {
				note = "\"cannot log in,\nsays the link expired\""
			}
			return fmt.Sprintf("%d,2026-03-%02d,open,%s", 1000+i, 1+i%28, note)
		}), 1},
		{"prose with a stray quote", "notes/p.md", "He said \"the export, which runs nightly, writes a file\n" + rows("", 150, func(i int) string {
			return []string{"to the bucket, and the loader, in turn, picks it", "up at six, checks it, and sends a summary"}[i%2]
		}), 0},
		{"yaml feature flags", "tools/flags.yaml", "flags:\n" + rows("", 120, func(i int) string {
			return fmt.Sprintf("  - name: flag-%d\n    enabled: %v\n    owner: team-%d", i, i%3 == 0, i%5)
		}), 0},
		{"json feature flags", "tools/flags.json", prettyRecords(120, func(i int) string {
			return fmt.Sprintf(`{"name": "flag-%d", "enabled": %v, "owner": "team-%d"}`, i, i%2 == 0, i%6)
		}), 0},
		{"json hosts one a line", "tools/hosts.json", "[\n" + rows("", 110, func(i int) string {
			return fmt.Sprintf(`  {"host": "h%d.internal", "port": 443, "tls": true},`, i)
		}) + `  {"host": "last.internal", "port": 443, "tls": true}` + "\n]\n", 0},
		{"yaml records of ids", "tools/users.yaml", "users:\n" + rows("", 110, func(i int) string {
			return fmt.Sprintf("  - name: user%d\n    uid: %d", i, 1000+i)
		}), 2},
		{"json config with differing fields", "tools/flags.json", prettyRecords(120, func(i int) string {
			if i%2 == 0 {
				return fmt.Sprintf(`{"name": "flag%d", "on": true}`, i)
			}
			return fmt.Sprintf(`{"name": "flag%d", "on": false, "note": "beta"}`, i)
		}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// line -1: refused with no line (a whole JSON document)
			err := Content(tc.rel, []byte(tc.content), DefaultLimits())
			if tc.line == 0 {
				if err != nil {
					t.Fatalf("Content = %v, want nil", err)
				}
				return
			}
			var rej *Rejection
			if !errors.As(err, &rej) || rej.Rule != RuleRawData {
				t.Fatalf("Content = %v, want a raw_data rejection", err)
			}
			if rej.Line != max(tc.line, 0) {
				t.Errorf("line %d, want %d: %v", rej.Line, tc.line, err)
			}
			if !strings.Contains(rej.Error(), "profile_source") {
				t.Errorf("the message does not point to profile_source: %v", err)
			}
		})
	}
}
