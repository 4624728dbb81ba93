package resources_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// now is the fixed clock of the tests.
var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// fixture is the memory of workspace "sales" (every category, with items out
// of force) and workspace "empty" (workspace.yaml only).
var fixture = map[string]string{
	"/memories/workspaces/sales/workspace.yaml": "title: Sales analytics\ndescription: |\n  Weekly revenue reporting for the sales team.\n  Second line.\nacl:\n  owners: [ana]\nsources: [orders, customers]\n",
	"/memories/workspaces/sales/task.md": `---
type: task_rule
source: user_confirmed
confidence: 0.9
valid_from: 2026-01-02
---
# Task

- Revenue is net of refunds.
- Weeks start on Monday (ISO 8601).

## Quality

- Every chart names its source.
`,
	"/memories/workspaces/sales/output.md":            "# Output\n\n- The artifact reads its data only from `data/orders.csv`.\n- Columns: order_id, amount, day.\n",
	"/memories/workspaces/sales/tools/warehouse.yaml": "kind: postgres\nendpoint: warehouse.internal:5432\nauth:\n  env: WAREHOUSE_DSN\nnotes: read-only role\n",
	"/memories/workspaces/sales/tools/crm.yaml":       "kind: rest\nendpoint: https://crm.example.com/api\nexpires_at: 2026-03-01\n",
	"/memories/workspaces/sales/tools/mail.yaml":      "kind: smtp\nendpoint: mail.internal\nvalid_from: 2026-05-01\n",
	"/memories/workspaces/sales/schemas/orders.md": `# orders
1200 rows × 3 columns; csv; key: order_id; duplicate rows: 0

- order_id: integer; unique; 1..1200
- amount: decimal; 0.5..980; mean 41.2 sd 30.1
- day: date YYYY-MM-DD; 2026-01-01..2026-05-31
`,
	"/memories/workspaces/sales/schemas/customers.md": `---
source: trusted_tool_result
valid_from: 2026-02-01T08:00:00Z
---
# customers
310 rows × 2 columns; csv; key: customer_id

- customer_id: integer; unique; 1..310
- region: categorical; values north 120, south 100, west 90
`,
	"/memories/workspaces/sales/schemas/legacy.md": `---
invalid_at: 2026-04-01
superseded_by: /memories/workspaces/sales/schemas/orders.md
---
# legacy
old export
`,
	"/memories/workspaces/sales/schemas/future.md": `---
valid_from: 2027-01-01
---
# future
not yet
`,
	"/memories/workspaces/sales/schemas/relationships.md": "# Relationships\n\n- orders.customer_id → customers.customer_id: many-to-one; 100.0% of values found (exact)\n",
	"/memories/workspaces/sales/notes/meeting.md":         "# Notes\n\nNot part of the context.\n",
	"/memories/workspaces/empty/workspace.yaml":           "title: Empty\n",
}

// newStore opens a store in a temporary directory holding files.
func newStore(tb testing.TB, files map[string]string) *memstore.Store {
	tb.Helper()
	ctx := context.Background()
	s, err := memstore.Open(ctx, tb.TempDir(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close(ctx) })
	for p, text := range files {
		if _, err := s.Create(ctx, p, text, nil); err != nil {
			tb.Fatalf("create %s: %v", p, err)
		}
	}
	return s
}

// golden compares got with testdata/golden/name, rewriting it under -update.
func golden(tb testing.TB, name, got string) {
	tb.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		tb.Fatalf("%v (run go test ./resources -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		tb.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// without returns files minus the paths with the given prefixes.
func without(files map[string]string, prefixes ...string) map[string]string {
	out := map[string]string{}
next:
	for p, t := range files {
		for _, pre := range prefixes {
			if strings.HasPrefix(p, pre) {
				continue next
			}
		}
		out[p] = t
	}
	return out
}

// longFixture is fixture with long task specifications and output
// constraints, to exercise cutting them.
var longFixture = func() map[string]string {
	files := without(fixture)
	var task, output strings.Builder
	task.WriteString("# Task\n\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&task, "- Rule %d: every report states its currency, rounding and source.\n", i)
	}
	task.WriteString("\n```sql\nselect 1;\n```\n")
	output.WriteString("# Output\n\n")
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&output, "- Contract %d: the artifact reads column c%d from data/orders.csv.\n", i, i)
	}
	files["/memories/workspaces/sales/task.md"] = task.String()
	files["/memories/workspaces/sales/output.md"] = output.String()
	return files
}()

// manySchemas is fixture with twelve more profiled sources, whose headlines
// cost more than a pointer to the schemas resource.
var manySchemas = func() map[string]string {
	files := without(fixture)
	for i := 1; i <= 12; i++ {
		files[fmt.Sprintf("/memories/workspaces/sales/schemas/source%02d.md", i)] = fmt.Sprintf(
			"# source%02d\n%d rows × 4 columns; parquet; key: id; duplicate rows: 0\n\n- id: integer; unique\n- name: string; lengths 3..40\n- score: decimal; 0..1; mean 0.5 sd 0.2\n- day: date; 2026-01-01..2026-05-31\n", i, 1000*i)
	}
	return files
}()
