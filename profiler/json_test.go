package profiler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// decoderFlatten is how records were flattened with a json.Decoder,
// member by member: the reference the in-place walk must agree with.
func decoderFlatten(prefix string, raw []byte, out *[]field, depth int) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		if prefix != "" {
			name = prefix + "." + name
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		switch {
		case len(v) == 0 || string(v) == "null":
		case v[0] == '{' && depth == 0:
			if err := decoderFlatten(name, v, out, 1); err != nil {
				return err
			}
		default:
			*out = append(*out, field{name: name, value: decoderText(v)})
		}
	}
	return nil
}

func decoderText(v json.RawMessage) string {
	if len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, v) == nil {
		return b.String()
	}
	return string(v)
}

var flattenSeeds = []string{
	`{}`,
	`{"a":1,"b":"x","c":null,"d":true}`,
	`{ "a" : { "b" : 1 , "c" : { "d" : [ 1 , 2 ] } } , "e" : [ { "f" : 1 } ] }`,
	`{"a.b":1,"a":{"b":2}}`,
	`{"a":1,"a":2}`,
	`{"s":"esc\"aped \\ \/ \n \u00e9 \ud83d\ude00 \ud800 end"}`,
	`{"k\u00e9y":"v","\"q\"":"w"}`,
	"{\"raw\":\"caf\xc3\xa9 \xff bad\",\"arr\":[\"\xff\", \"a b\"]}",
	`{"n":-12.5e+3,"m":0,"big":123456789012345678901234567890}`,
	`{"deep":{"x":{"y":{"z":[1,{"w":"} ] {"}]}}}}`,
	`{"ws":[ 1 ,	2 ,
 3 ],"o":{ }}`,
	`{"bs":"\\\\","q":"\\\""}`,
}

// TestFlatten_MatchesDecoder: flattening a record in place gives what
// decoding it member by member gave: the same names, values and order.
func TestFlatten_MatchesDecoder(t *testing.T) {
	for _, s := range flattenSeeds {
		checkFlatten(t, []byte(s))
	}
}

func FuzzFlatten(f *testing.F) {
	for _, s := range flattenSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = bytes.TrimSpace(raw)
		if !json.Valid(raw) || len(raw) == 0 || raw[0] != '{' {
			return
		}
		checkFlatten(t, raw)
	})
}

func checkFlatten(t *testing.T, raw []byte) {
	t.Helper()
	var want []field
	if err := decoderFlatten("", raw, &want, 0); err != nil {
		t.Fatalf("reference on %q: %v", raw, err)
	}
	j := newJSONReaderOf("json", 1<<30)
	got := j.record(raw)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(field{})); diff != "" {
		t.Errorf("flatten %q (-decoder +in place):\n%s", raw, diff)
	}
}

// TestScalarText_Cut: a value longer than the limit is cut at a rune
// boundary, and marked; a shorter one is whole.
func TestScalarText_Cut(t *testing.T) {
	tests := []struct {
		raw   string
		limit int
		want  string
		cut   bool
	}{
		{`"abcdef"`, 6, "abcdef", false},
		{`"abcdef"`, 4, "abcd", true},
		{`"ééé"`, 5, "éé", true}, // é is two bytes
		{`"a\u00e9b"`, 2, "a", true},
		{`[1, 2, 3]`, 5, "[1,2,", true},
		{`[1, 2, 3]`, 7, "[1,2,3]", false},
		{`{"a": "x y"}`, 100, `{"a":"x y"}`, false},
		{`12345`, 3, "123", true},
	}
	for _, tt := range tests {
		got, cut := scalarText([]byte(tt.raw), tt.limit)
		if got != tt.want || cut != tt.cut {
			t.Errorf("scalarText(%s, %d) = %q, %v; want %q, %v", tt.raw, tt.limit, got, cut, tt.want, tt.cut)
		}
	}
}

// TestClip: clip reads only what it keeps, and keeps what []rune kept.
func TestClip(t *testing.T) {
	ref := func(s string, n int) string {
		if utf8.RuneCountInString(s) <= n {
			return s
		}
		return string([]rune(s)[:n-1]) + "…"
	}
	for _, s := range []string{"", "abc", strings.Repeat("x", 40), strings.Repeat("x", 41), strings.Repeat("é", 45),
		"\xff\xfe" + strings.Repeat("y", 50), strings.Repeat("a", 38) + "\xe2\x82", strings.Repeat("日本", 30) + "\xff"} {
		for _, n := range []int{1, 2, 39, 40, 41} {
			if got, want := clip(s, n), ref(s, n); got != want {
				t.Errorf("clip(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// TestStrBatch: rows that set some columns, in any order and more than
// once, come out with the others null, whether a column is set in no
// row, some, or a row of a later batch.
func TestStrBatch(t *testing.T) {
	recs := `[{"a":"1","b":"x"},{},{"c":"3"},{"b":"y","b":"z"},{"a":""}]`
	got := readAllRecords(t, &jsonSource{jsonReader: newRawJSONReader([]byte(recs), 0)})
	want := []map[string]string{{"a": "1", "b": "x"}, {}, {"c": "3"}, {"b": "z"}, {"a": ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	// the same over many batches: a column first set late, rows of none
	var b strings.Builder
	b.WriteString("[")
	want = nil
	for i := range 20000 {
		if i > 0 {
			b.WriteString(",")
		}
		switch {
		case i%7000 == 6999:
			fmt.Fprintf(&b, `{"late":"%d"}`, i)
			want = append(want, map[string]string{"late": fmt.Sprint(i)})
		case i%3 == 0:
			fmt.Fprintf(&b, `{"id":"%d"}`, i)
			want = append(want, map[string]string{"id": fmt.Sprint(i)})
		default:
			b.WriteString("{}")
			want = append(want, map[string]string{})
		}
	}
	b.WriteString("]")
	got = readAllRecords(t, &jsonSource{jsonReader: newRawJSONReader([]byte(b.String()), 0)})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("many records (-want +got):\n%s", diff)
	}
}

// TestRecordsAt: the records are found in the response's text where
// decoding the document found them.
func TestRecordsAt(t *testing.T) {
	tests := []struct {
		name, body, path string
		want             string // the records' JSON, or an error's text
	}{
		{"array", ` [{"a":1}] `, "", `[{"a":1}]`},
		{"object of one array", `{"n":2,"items":[{"a":1}],"o":{}}`, "", `[{"a":1}]`},
		{"path", `{"data":{"items":[1,2]}}`, "data.items", `[1,2]`},
		{"last of equal keys", `{"data":[1],"data":[2]}`, "data", `[2]`},
		{"escaped key", `{"d\u0061ta":[3]}`, "data", `[3]`},
		{"after the document", `[{"a":1}] trailing`, "", `[{"a":1}]`},
		{"invalid", `[{"a":1},]`, "", "not valid JSON"},
		{"truncated", `[{"a":1}`, "", "not valid JSON"},
		{"empty", `  `, "", "not valid JSON"},
		{"no key", `{"data":{"rows":[]}}`, "data.items", `no key "items" (keys here: rows)`},
		{"not an object", `{"data":[1]}`, "data.items", `"items" is not inside an object`},
		{"not an array", `{"data":{"items":{}}}`, "data.items", "does not lead to an array"},
		{"two arrays", `{"a":[],"b":[]}`, "", "(candidates: a, b)"},
		{"scalar", `42`, "", "does not lead to an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			doc, err := firstValue([]byte(tt.body))
			if err != nil {
				got = "not valid JSON: " + err.Error()
			} else if recs, err := recordsAt(doc, tt.path); err != nil {
				got = err.Error()
			} else {
				got = string(recs)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("records of %s at %q: %s, want %s", tt.body, tt.path, got, tt.want)
			}
		})
	}
}

// TestProfile_JSONFieldLimit: a JSON value longer than the field size
// limit is cut there, with a warning, as a CSV field is.
func TestProfile_JSONFieldLimit(t *testing.T) {
	p := writeTemp(t, "long.jsonl", `{"a":"`+strings.Repeat("é", 20)+`","b":[1, 2, 3, 4, 5, 6, 7]}`+"\n"+`{"a":"s","b":[]}`+"\n")
	tp, err := Profile(t.Context(), FileSource{Path: p, MaxFieldBytes: 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(tp.Warnings, "; "); !strings.Contains(w, "2 fields exceeded the field size limit and were truncated") {
		t.Errorf("warnings %q, want 2 fields truncated", w)
	}
	if got, want := col(tp, "a").Lengths.Max, 4; got != want {
		t.Errorf("longest a = %d characters, want %d (9 bytes cut at a rune boundary)", got, want)
	}
	if got, want := col(tp, "b").Lengths.Max, 9; got != want {
		t.Errorf("longest b = %d characters, want %d", got, want)
	}
}

// TestProfile_LongSampleCells: a sample cell of a long value shows as a
// short one does, clipped, or masked when it holds personal data.
func TestProfile_LongSampleCells(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 50)
	var b strings.Builder
	b.WriteString("id,note\n")
	for i := range 20 {
		note := long
		if i%2 == 0 {
			note = fmt.Sprintf("write to ann%d@example.com %s", i, long)
		}
		fmt.Fprintf(&b, "%d,%s\n", i, note)
	}
	tp := profileFile(t, writeTemp(t, "notes.csv", b.String()))
	shown := map[string]bool{}
	for _, row := range tp.Samples {
		shown[row[1]] = true
	}
	for cell := range shown {
		if cell != "<email>" && cell != clip(long, sampleCellLen) {
			t.Errorf("sample cell %q, want <email> or the clipped note", cell)
		}
	}
	if len(shown) != 2 {
		t.Errorf("sample cells %v, want both kinds of note", shown)
	}
}

// FuzzRecordsAt: finding records in any response never fails but with an
// error, and finds in valid JSON as many records as decoding it does.
func FuzzRecordsAt(f *testing.F) {
	for _, s := range []string{`[{"a":1},2,"x",[3]]`, `{"items":[{}, {}]}`, `{"a":{"b":[1]}}`, `[`, `{"a":"\"}`, `"]`, `{"a":[1,}`} {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "a.b")
	}
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		doc, err := firstValue(body)
		if err != nil {
			return
		}
		recs, err := recordsAt(doc, path)
		if err != nil {
			return
		}
		n := 0
		for items := elements(recs); ; n++ {
			item, ok := items.next()
			if !ok {
				break
			}
			newJSONReaderOf("json", 0).record(item)
		}
		var all []json.RawMessage
		if err := json.Unmarshal(recs, &all); err != nil {
			t.Fatalf("records %q are not a JSON array: %v", recs, err)
		}
		if n != len(all) {
			t.Errorf("%d records in %q, decoding finds %d", n, recs, len(all))
		}
	})
}
