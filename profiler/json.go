package profiler

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// jsonReader turns a stream of JSON objects (a JSON array or JSON Lines)
// into Arrow batches of string columns. Nested objects are flattened one
// level with dotted names; deeper values and arrays become JSON text.
type jsonReader struct {
	next   func() ([]field, error) // one record's flattened fields in source order; io.EOF at the end
	format string
	names  []string
	index  map[string]int
	rec    arrow.RecordBatch
	err    error
	warns  []string
	nonObj int64
}

func newJSONReader(r io.Reader, _ int) (*jsonReader, error) {
	br := bufio.NewReader(r)
	var first byte
	for {
		b, err := br.ReadByte()
		if err != nil {
			return nil, errors.New("profiler: the JSON input is empty; nothing to profile")
		}
		if b == ' ' || b == '\n' || b == '\r' || b == '\t' {
			continue
		}
		if b == 0xEF { // BOM
			br.Discard(2)
			continue
		}
		first = b
		br.UnreadByte()
		break
	}
	dec := json.NewDecoder(br)
	dec.UseNumber()
	j := &jsonReader{index: map[string]int{}, format: "jsonl"}
	if first == '[' {
		j.format = "json"
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("profiler: invalid JSON: %w", err)
		}
		j.next = func() ([]field, error) {
			if !dec.More() {
				return nil, io.EOF
			}
			return j.decodeOne(dec)
		}
	} else if first == '{' {
		j.next = func() ([]field, error) { return j.decodeOne(dec) }
	} else {
		return nil, errors.New("profiler: JSON input must be an array of objects or JSON Lines (one object per line)")
	}
	return j, nil
}

// field is one flattened column value of a JSON record.
type field struct{ name, value string }

func (j *jsonReader) decodeOne(dec *json.Decoder) ([]field, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("profiler: invalid JSON at byte %d: %w", dec.InputOffset(), err)
	}
	out, err := j.record(raw)
	if err != nil {
		return nil, fmt.Errorf("profiler: invalid JSON at byte %d: %w", dec.InputOffset(), err)
	}
	return out, nil
}

// record flattens one raw record; a value that is not an object becomes
// column "value".
func (j *jsonReader) record(raw json.RawMessage) ([]field, error) {
	if len(raw) == 0 || raw[0] != '{' {
		j.nonObj++
		return []field{{"value", scalarText(raw)}}, nil
	}
	var out []field
	err := flattenRaw("", raw, &out, 0)
	return out, err
}

// newRawJSONReader reads records kept as raw JSON (the REST case), so
// columns come in the order their members appear.
func newRawJSONReader(items []json.RawMessage) *jsonReader {
	j := &jsonReader{index: map[string]int{}, format: "json"}
	i := 0
	j.next = func() ([]field, error) {
		if i >= len(items) {
			return nil, io.EOF
		}
		i++
		return j.record(bytes.TrimSpace(items[i-1]))
	}
	return j
}

// flattenRaw appends the members of the JSON object raw in source order:
// objects at the top level are flattened one level with dotted names,
// deeper objects and arrays become compact JSON text, nulls are left out.
func flattenRaw(prefix string, raw json.RawMessage, out *[]field, depth int) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
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
			if err := flattenRaw(name, v, out, 1); err != nil {
				return err
			}
		default:
			*out = append(*out, field{name, scalarText(v)})
		}
	}
	return nil
}

// scalarText is a JSON value as profiled text: strings unquoted, numbers
// and booleans as written, objects and arrays as compact JSON.
func scalarText(v json.RawMessage) string {
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

// newSliceJSONReader reads records already decoded (the REST case); their
// members come in name order, since a decoded object keeps no order.
func newSliceJSONReader(items []any) *jsonReader {
	j := &jsonReader{index: map[string]int{}, format: "json"}
	i := 0
	j.next = func() ([]field, error) {
		if i >= len(items) {
			return nil, io.EOF
		}
		v := items[i]
		i++
		m, ok := v.(map[string]any)
		if !ok {
			j.nonObj++
			m = map[string]any{"value": v}
		}
		flat := map[string]string{}
		flatten("", m, flat, 0)
		out := make([]field, 0, len(flat))
		for k, v := range flat {
			out = append(out, field{k, v})
		}
		sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
		return out, nil
	}
	return j
}

func flatten(prefix string, m map[string]any, out map[string]string, depth int) {
	for k, v := range m {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		switch x := v.(type) {
		case nil:
		case map[string]any:
			if depth == 0 {
				flatten(name, x, out, 1)
			} else {
				b, _ := json.Marshal(x)
				out[name] = string(b)
			}
		case []any:
			b, _ := json.Marshal(x)
			out[name] = string(b)
		case string:
			out[name] = x
		case json.Number:
			out[name] = x.String()
		case bool:
			out[name] = strconv.FormatBool(x)
		default:
			out[name] = fmt.Sprint(x)
		}
	}
}

func (j *jsonReader) Next() bool {
	if j.rec != nil {
		j.rec.Release()
		j.rec = nil
	}
	if j.err != nil {
		return false
	}
	var rows []map[string]string
	size := 0
	for len(rows) < 8192 && size < batchBytes {
		m, err := j.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			j.err = err
			return false
		}
		// columns in the order they first appear
		flat := make(map[string]string, len(m))
		for _, f := range m {
			size += len(f.value)
			if _, ok := j.index[f.name]; !ok {
				if len(j.names) == MaxColumns {
					// Refused before a batch of every column by every row
					// is built.
					j.err = errTooManyColumns
					return false
				}
				j.index[f.name] = len(j.names)
				j.names = append(j.names, f.name)
			}
			flat[f.name] = f.value
		}
		rows = append(rows, flat)
	}
	if len(rows) == 0 {
		if j.nonObj > 0 {
			j.warns = append(j.warns, fmt.Sprintf("%d records were not objects (profiled as column \"value\")", j.nonObj))
			j.nonObj = 0
		}
		return false
	}
	fields := make([]arrow.Field, len(j.names))
	cols := make([]arrow.Array, len(j.names))
	for ci, name := range j.names {
		fields[ci] = arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true}
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for _, r := range rows {
			if v, ok := r[name]; ok {
				b.Append(v)
			} else {
				b.AppendNull()
			}
		}
		cols[ci] = b.NewArray()
		b.Release()
	}
	j.rec = array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return true
}

func (j *jsonReader) RecordBatch() arrow.RecordBatch { return j.rec }
func (j *jsonReader) Err() error                     { return j.err }
func (j *jsonReader) Release() {
	if j.rec != nil {
		j.rec.Release()
		j.rec = nil
	}
}
