package lint_test

import (
	"testing"

	"github.com/selmem/selmem/refresh/lint"
	"github.com/selmem/selmem/refresh/scaffold"
)

// TestProgram_Scaffold checks that every scaffolded dashboard is quiet,
// even against data whose values equal each number the program uses.
func TestProgram_Scaffold(t *testing.T) {
	adversarial := lint.Snapshot{
		Columns: []lint.Column{{Name: "region", Type: "text"}, {Name: "amount", Type: "number"}, {Name: "n", Type: "integer"}},
	}
	for _, v := range []float64{640, 150, 90, 22, 6, 10, 100, 2000, 0.5, 1.45, 1.6, 24, 16, 12, 8, 720, 160, 15, 1.05, 0.85, 1.1} {
		adversarial.Records = append(adversarial.Records, map[string]any{"region": "Rows", "amount": v, "n": v})
	}
	for _, word := range []string{"data", "more", "blank", "chart", "region", "amount", "Weekly", "sales", "Sales", "Rows", "Total", "Other", "svg", "end", "middle", "img", "bar", "row", "class", "error", "ready", "label", "main", "card", "value"} {
		adversarial.Records = append(adversarial.Records, map[string]any{"region": word, "amount": 1, "n": 1})
	}
	snaps := map[string]lint.Snapshot{"sales v1": lint.SalesV1(t), "adversarial": adversarial}
	columnSets := map[string][]scaffold.Column{
		"sales":   {{Name: "order_id", Type: "text"}, {Name: "region", Type: "text"}, {Name: "day", Type: "date"}, {Name: "units", Type: "integer"}, {Name: "amount", Type: "number"}},
		"count":   {{Name: "region", Type: "text"}},
		"numbers": {{Name: "amount", Type: "number"}},
	}
	for sn, snap := range snaps {
		for cn, cols := range columnSets {
			files, err := scaffold.Dashboard("Weekly sales", cols)
			if err != nil {
				t.Fatal(err)
			}
			if got := lint.Program(files, snap); len(got) != 0 {
				t.Errorf("scaffold %s against %s: %d findings, want none:\n%s", cn, sn, len(got), lint.Dump(got))
			}
		}
	}
}
