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
	next   func() (map[string]any, error) // io.EOF at the end
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
		j.next = func() (map[string]any, error) {
			if !dec.More() {
				return nil, io.EOF
			}
			return j.decodeOne(dec)
		}
	} else if first == '{' {
		j.next = func() (map[string]any, error) { return j.decodeOne(dec) }
	} else {
		return nil, errors.New("profiler: JSON input must be an array of objects or JSON Lines (one object per line)")
	}
	return j, nil
}

func (j *jsonReader) decodeOne(dec *json.Decoder) (map[string]any, error) {
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("profiler: invalid JSON at byte %d: %w", dec.InputOffset(), err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		j.nonObj++
		return map[string]any{"value": v}, nil
	}
	return m, nil
}

// newSliceJSONReader reads records already decoded (the REST case).
func newSliceJSONReader(items []any) *jsonReader {
	j := &jsonReader{index: map[string]int{}, format: "json"}
	i := 0
	j.next = func() (map[string]any, error) {
		if i >= len(items) {
			return nil, io.EOF
		}
		v := items[i]
		i++
		if m, ok := v.(map[string]any); ok {
			return m, nil
		}
		j.nonObj++
		return map[string]any{"value": v}, nil
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
		flat := map[string]string{}
		flatten("", m, flat, 0)
		// new columns in a stable order within the record
		var fresh []string
		for k, v := range flat {
			size += len(v)
			if _, ok := j.index[k]; !ok {
				fresh = append(fresh, k)
			}
		}
		sort.Strings(fresh)
		for _, k := range fresh {
			j.index[k] = len(j.names)
			j.names = append(j.names, k)
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

var _ = bytes.MinRead
