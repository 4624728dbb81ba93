package refresh

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/profiler"
)

func TestCompatible(t *testing.T) {
	tests := []struct {
		was, now string
		want     bool
	}{
		{TypeInteger, TypeInteger, true},
		{TypeInteger, TypeNumber, true}, // safe widening
		{TypeNumber, TypeInteger, true}, // whole numbers this time
		{TypeDate, TypeTimestamp, true},
		{TypeTimestamp, TypeDate, true},
		{TypeText, TypeEmpty, true}, // no values this time
		{TypeEmpty, TypeNumber, true},
		{TypeText, TypeInteger, false},
		{TypeText, TypeNumber, false},
		{TypeInteger, TypeText, false},
		{TypeNumber, TypeText, false},
		{TypeBoolean, TypeInteger, false},
		{TypeDate, TypeText, false},
		{TypeNumber, TypeDate, false},
	}
	for _, tc := range tests {
		if got := compatible(tc.was, tc.now); got != tc.want {
			t.Errorf("compatible(%s, %s) = %v, want %v", tc.was, tc.now, got, tc.want)
		}
	}
}

func TestValueType(t *testing.T) {
	tests := map[string]string{
		"0": TypeInteger, "-12": TypeInteger, "123456789012345678": TypeInteger,
		"1234567890123456789": TypeNumber, // beyond 18 digits: a number
		"007":                 TypeText,   // a code
		"1.5":                 TypeNumber, "-0.25": TypeNumber, "1e6": TypeNumber, "+3": TypeNumber, ".5": TypeNumber,
		"0x1p3": TypeText, "Inf": TypeText, "NaN": TypeText, "1_000": TypeText, "1,5": TypeText, "1e999": TypeText,
		"true": TypeBoolean, "FALSE": TypeBoolean, "yes": TypeText,
		"2026-11-02": TypeDate, "2026-02-30": TypeText,
		"2026-11-02T10:00:00Z": TypeTimestamp, "2026-11-02 10:00": TypeTimestamp, "2026-11-02 10:00:00.5": TypeTimestamp,
		"02/11/2026": TypeText, "EMEA": TypeText,
	}
	for in, want := range tests {
		if got := valueType(in); got != want {
			t.Errorf("valueType(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestAppendValueText_NotAsTyped writes values that do not match their
// column's type, as a snapshot changed by hand may hold: each is valid
// JSON (a number column's junk is null), never a panic.
func TestAppendValueText_NotAsTyped(t *testing.T) {
	tests := []struct{ value, typ, want string }{
		{"", TypeInteger, "null"},
		{"", TypeNumber, "null"},
		{"", TypeBoolean, "false"},
		{"007", TypeInteger, "7"},
		{"2026-11-02", TypeInteger, "null"},
		{"2026-11-02", TypeNumber, "null"},
		{`1"2`, TypeInteger, "null"},
		{"+3", TypeNumber, "3"},
		{"1e999", TypeNumber, "null"},
		{"12", TypeInteger, "12"},
		{"-0.25", TypeNumber, "-0.25"},
		{"x", TypeText, `"x"`},
	}
	for _, tt := range tests {
		if got := string(appendValueText(nil, tt.value, tt.typ)); got != tt.want {
			t.Errorf("appendValueText(%q, %s) = %s, want %s", tt.value, tt.typ, got, tt.want)
		}
	}
}

// TestTable_JSON loads a CSV with awkward values and checks the snapshot
// against its golden file, that it is valid JSON, and that it is safe
// inside an HTML script element.
func TestTable_JSON(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "awkward.csv")
	csv := "name,score,ok,when,mixed,note\n" +
		"</script><script>alert(1)</script>,1.5,true,2026-01-02,1,\"line\nbreak\"\n" +
		"\"quote \"\" & amp\",+2,false,2026-01-03 04:05,x,\u2028sep\n" +
		"NA,.5,,2026-01-04,2.5,\t tab\n"
	if err := os.WriteFile(p, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := Load(context.Background(), profiler.FileSource{Path: p}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Release()
	got := tab.JSON()
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("snapshot is not JSON: %v\n%s", err, got)
	}
	for _, bad := range []string{"<", ">", "&", "\u2028"} {
		if containsString(got, bad) {
			t.Errorf("snapshot holds a raw %q", bad)
		}
	}
	if f := FrameOf(tab); string(f.JSON(nil)) != string(got) {
		t.Errorf("FrameOf(table).JSON differs from the snapshot:\n%s", f.JSON(nil))
	}
	golden := filepath.Join("testdata", "awkward.json")
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

// TestFrameOf_Batches checks that a frame of a table read in several
// batches, with missing values in text and number columns, holds what
// the snapshot holds.
func TestFrameOf_Batches(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,region,amount\n")
	const rows = 70_000 // more than one batch of the CSV reader
	for i := range rows {
		region := []string{"EMEA", "", "AMER", "NA", "APAC \u00e9"}[i%5]
		amount := fmt.Sprintf("%d.%02d", i%997, i%100)
		if i%11 == 0 {
			amount = ""
		}
		fmt.Fprintf(&b, "%d,%s,%s\n", i, region, amount)
	}
	p := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := Load(context.Background(), profiler.FileSource{Path: p}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Release()
	if len(tab.batches) < 2 {
		t.Fatalf("the table has %d batch(es); the test needs several", len(tab.batches))
	}
	f := FrameOf(tab)
	if f.Rows != rows || len(f.Values[1]) != rows || f.Values[1][2] != "AMER" || !f.Null[1][1] || !f.Null[1][3] || !f.Null[2][0] {
		t.Errorf("frame: %d rows, row 2 region %q, nulls %v %v %v", f.Rows, f.Values[1][2], f.Null[1][1], f.Null[1][3], f.Null[2][0])
	}
	if got, want := f.JSON(nil), tab.JSON(); string(got) != string(want) {
		t.Errorf("FrameOf(table).JSON differs from the snapshot (%d and %d bytes)", len(got), len(want))
	}
}

func containsString(b []byte, s string) bool { return strings.Contains(string(b), s) }
