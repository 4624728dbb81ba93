package refresh

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// numberSyntax is the number grammar isNumber implements, for the fuzz
// reference.
var numberSyntax = regexp.MustCompile(`^[+-]?(0|[1-9][0-9]*|0?\.[0-9]+|(0|[1-9][0-9]*)\.[0-9]*)([eE][+-]?[0-9]+)?$`)

// FuzzValueType checks the hand-written number grammar against a
// reference, and that every value typed integer or number is written as
// valid JSON with the same value.
func FuzzValueType(f *testing.F) {
	for _, s := range []string{"0", "-12", "007", "1.5", ".5", "5.", "+3", "1e6", "1e999", "1e-999", "0x1p3", "Inf", "NaN", "1_000", "-", "e5", "1.2.3", "00.5", "0.5e+10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref := false
		if numberSyntax.MatchString(s) {
			v, err := strconv.ParseFloat(s, 64)
			ref = err == nil && !math.IsInf(v, 0)
		}
		if got := isNumber(s); got != ref {
			t.Fatalf("isNumber(%q) = %v, reference %v", s, got, ref)
		}
		typ := valueType(s)
		if typ != TypeInteger && typ != TypeNumber {
			return
		}
		out := appendValueText(nil, s, typ)
		var v float64
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%q typed %s is written %q, not a JSON number: %v", s, typ, out, err)
		}
		want, _ := strconv.ParseFloat(s, 64)
		if v != want {
			t.Fatalf("%q is written %q = %v, want %v", s, out, v, want)
		}
	})
}

// FuzzAppendString checks that any text is written as a JSON string that
// decodes to the same text (invalid UTF-8 replaced) and holds no raw
// character HTML or JavaScript would act on inside a script element.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "</script><script>", "a\u2028b\u2029", "\x00\x1f\"\\", "\xff\xfe", "&amp;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q is written %q, not a JSON string: %v", s, out, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); got != want && utf8.ValidString(s) {
			t.Fatalf("%q decodes to %q", s, got)
		}
		if strings.ContainsAny(string(out), "<>&\u2028\u2029") {
			t.Fatalf("%q is written %q, with a raw special character", s, out)
		}
	})
}

// FuzzColumnar checks that a frame encoded by column, whatever its values
// (a snapshot changed by hand may hold any text in a column of any type),
// is two JSON texts, the numbers without a quote or backslash, that
// expand as a view expands them (columnar.js) to the records Frame.JSON
// writes.
func FuzzColumnar(f *testing.F) {
	for _, s := range [][3]string{{"1", "2", "1"}, {"1.5", "-3", "1e5"}, {"true", "False", "x"}, {"2026-11-02", "a\"b", "\\"}, {"", "\x00", "\xff"}, {"</script>", "\u2028", "007"}} {
		f.Add(s[0], s[1], s[2])
	}
	types := []string{TypeInteger, TypeNumber, TypeBoolean, TypeDate, TypeTimestamp, TypeText, TypeEmpty}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		var cols []Column
		for i, typ := range types {
			cols = append(cols, Column{Name: "c" + strconv.Itoa(i), Type: typ})
		}
		fr := newFrame(cols, 0)
		for _, v := range []string{a, b, a, c, "", a} {
			for i := range cols {
				fr.Values[i] = append(fr.Values[i], v)
				fr.Null[i] = append(fr.Null[i], v == "" && i%2 == 0)
			}
			fr.Rows++
		}
		enc := fr.Columnar(map[string][]byte{"extra": []byte(`{"k":"v"}`)})
		if strings.ContainsAny(string(enc.Numbers), "\"\\") {
			t.Fatalf("numbers with a quote or backslash: %s", enc.Numbers)
		}
		var data struct {
			Columns []Column          `json:"columns"`
			Rows    int               `json:"rows"`
			Values  []json.RawMessage `json:"values"`
			Extra   map[string]string `json:"extra"`
		}
		var numbers []json.RawMessage
		if err := json.Unmarshal(enc.Data, &data); err != nil {
			t.Fatalf("data is not JSON: %v\n%s", err, enc.Data)
		}
		if err := json.Unmarshal(enc.Numbers, &numbers); err != nil {
			t.Fatalf("numbers are not JSON: %v\n%s", err, enc.Numbers)
		}
		if len(data.Values) != len(cols) || len(numbers) != len(cols) || data.Rows != int(fr.Rows) || data.Extra["k"] != "v" {
			t.Fatalf("data %s, numbers %s", enc.Data, enc.Numbers)
		}
		records := make([]map[string]any, fr.Rows)
		for r := range records {
			records[r] = map[string]any{}
		}
		for i, col := range cols {
			var vals []any
			var dict struct {
				Dict []any `json:"dict"`
			}
			switch {
			case json.Unmarshal(data.Values[i], &vals) == nil && vals != nil:
			case json.Unmarshal(data.Values[i], &dict) == nil && dict.Dict != nil:
				var codes []int
				if err := json.Unmarshal(numbers[i], &codes); err != nil {
					t.Fatalf("column %d: codes %s: %v", i, numbers[i], err)
				}
				for _, code := range codes {
					if code < 0 {
						vals = append(vals, nil)
					} else {
						vals = append(vals, dict.Dict[code])
					}
				}
			default:
				if err := json.Unmarshal(numbers[i], &vals); err != nil {
					t.Fatalf("column %d: values %s: %v", i, numbers[i], err)
				}
			}
			if len(vals) != len(records) {
				t.Fatalf("column %d has %d values", i, len(vals))
			}
			for r, v := range vals {
				records[r][col.Name] = v
			}
		}
		var want struct {
			Records []map[string]any `json:"records"`
		}
		if err := json.Unmarshal(fr.JSON(nil), &want); err != nil {
			t.Fatalf("Frame.JSON is not JSON: %v\n%s", err, fr.JSON(nil))
		}
		if got, _ := json.Marshal(records); string(got) != func() string { w, _ := json.Marshal(want.Records); return string(w) }() {
			t.Fatalf("expanded:\n%s\nrecords:\n%s", got, fr.JSON(nil))
		}
	})
}

// FuzzParseBinding checks that any binding.yaml (a model may write one) is
// parsed or refused without a panic, and that an accepted view aggregate
// applies to data of the binding's columns, giving one column per group
// key and measure.
func FuzzParseBinding(f *testing.F) {
	for _, s := range []string{
		"connector: sales\ncolumns: [{name: region, type: string}, {name: amount, type: number}]\n",
		"connector: sales\ncolumns: [{name: region, type: string}, {name: amount, type: number}]\nview: {aggregate: {group_by: [region], measures: [{col: amount, fn: sum}, {fn: count, as: orders}], limit: 2}}\n",
		"connector: sales\ncolumns: [{name: a, type: integer}]\nview: {aggregate: {measures: [{col: a, fn: mean}]}}\n",
		"connector: x\nview: {aggregate: {group_by: [a, a], measures: []}}\n",
		"connector: ../x\n", "{}", "- [", "view: 1\n",
	} {
		f.Add(s, "1.5")
	}
	f.Fuzz(func(t *testing.T, doc, cell string) {
		b, err := ParseBinding([]byte(doc))
		if err != nil || b.View == nil || b.View.Aggregate == nil {
			return
		}
		a := b.View.Aggregate
		fr := newFrame(b.Columns, 3)
		for c := range b.Columns {
			for r := range 3 {
				fr.Values[c] = append(fr.Values[c], []string{cell, "2", ""}[r])
				fr.Null[c] = append(fr.Null[c], r == 2)
			}
		}
		out, _, err := a.Apply(fr)
		if err != nil {
			return // e.g. text in a number column
		}
		if want := len(a.GroupBy) + len(a.Measures); len(out.Columns) != want {
			t.Fatalf("%d columns out, want %d (group keys and measures)", len(out.Columns), want)
		}
	})
}
