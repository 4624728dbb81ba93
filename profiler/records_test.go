package profiler

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/go-cmp/cmp"
)

// readAll drains r into rows of column name → value ("" and absent are
// told apart: absent keys are null).
func readAllRecords(t *testing.T, r RecordReader) []map[string]string {
	t.Helper()
	defer r.Release()
	var rows []map[string]string
	for r.Next() {
		rec := r.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			row := map[string]string{}
			for c, f := range rec.Schema().Fields() {
				col := rec.Column(c).(*array.String)
				if col.IsValid(i) {
					row[f.Name] = col.Value(i)
				}
			}
			rows = append(rows, row)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestNewRecordsReader(t *testing.T) {
	decode := func(s string) []any {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var v []any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name     string
		records  []any
		want     []map[string]string
		warnings int
	}{
		{
			name:    "flat objects keep exact numbers",
			records: decode(`[{"id": 9007199254740993, "amount": 1000000, "ok": true}, {"id": 2, "note": "x"}]`),
			want: []map[string]string{
				{"id": "9007199254740993", "amount": "1000000", "ok": "true"},
				{"id": "2", "note": "x"},
			},
		},
		{
			name:    "nested objects flatten one level",
			records: decode(`[{"a": {"b": 1, "c": {"d": 2}}, "tags": ["x", "y"]}]`),
			want:    []map[string]string{{"a.b": "1", "a.c": `{"d":2}`, "tags": `["x","y"]`}},
		},
		{
			name:     "a record that is not an object is a value column",
			records:  decode(`[{"a": 1}, 5]`),
			want:     []map[string]string{{"a": "1"}, {"value": "5"}},
			warnings: 1,
		},
		{
			name:    "no records",
			records: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecordsReader("orders", "mcp-json", tt.records)
			got := readAllRecords(t, r)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			info := r.Info()
			if info.Name != "orders" || info.Format != "mcp-json" {
				t.Errorf("Info = %q, %q; want orders, mcp-json", info.Name, info.Format)
			}
			if got := len(info.Warnings); got != tt.warnings {
				t.Errorf("warnings = %q; want %d", info.Warnings, tt.warnings)
			}
		})
	}
}

func ExampleNewRecordsReader() {
	dec := json.NewDecoder(strings.NewReader(`[{"id": 1, "region": {"name": "north"}}, {"id": 2, "region": {"name": "south"}}]`))
	dec.UseNumber()
	var records []any
	if err := dec.Decode(&records); err != nil {
		panic(err)
	}
	r := NewRecordsReader("orders", "mcp-json", records)
	defer r.Release()
	for r.Next() {
		rec := r.RecordBatch()
		for i, f := range rec.Schema().Fields() {
			fmt.Println(f.Name, rec.Column(i).(*array.String).Value(1))
		}
	}
	// Output:
	// id 2
	// region.name south
}
