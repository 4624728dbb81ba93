package lint_test

import (
	"strconv"
	"testing"

	"github.com/selmem/selmem/refresh/lint"
	"github.com/selmem/selmem/refresh/scaffold"
)

// BenchmarkProgram lints the scaffolded dashboard against snapshots of
// 10,000 and 100,000 rows (the refresh benchmark's sizes).
func BenchmarkProgram(b *testing.B) {
	cols := []scaffold.Column{{Name: "id", Type: "text"}, {Name: "region", Type: "text"}, {Name: "units", Type: "integer"}, {Name: "amount", Type: "number"}}
	files, err := scaffold.Dashboard("Sales", cols)
	if err != nil {
		b.Fatal(err)
	}
	regions := []string{"EMEA", "APAC", "AMER", "LATAM"}
	for _, n := range []int{10_000, 100_000} {
		snap := lint.Snapshot{Columns: []lint.Column{{Name: "id", Type: "text"}, {Name: "region", Type: "text"}, {Name: "units", Type: "integer"}, {Name: "amount", Type: "number"}}, Rows: n}
		for i := range n {
			snap.Records = append(snap.Records, map[string]any{
				"id": "o" + strconv.Itoa(i), "region": regions[i%4], "units": float64(i % 97), "amount": float64(i%1000) * 1.25,
			})
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if got := lint.Program(files, snap); len(got) != 0 {
					b.Fatalf("findings: %v", got)
				}
			}
		})
	}
}
