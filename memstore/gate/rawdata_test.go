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
