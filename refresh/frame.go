package refresh

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// Frame is a data set held by column: the snapshot's values as text, the
// way views encode and aggregate them without reading the snapshot again.
type Frame struct {
	Columns []Column
	Rows    int64
	// Values holds each column's values as text (see cell); Null says
	// which are null.
	Values [][]string
	Null   [][]bool
}

// FrameOf copies t's data into a Frame. A text column's values are
// slices of one copy of its Arrow value buffer (the table's buffers are
// released), so the copy costs one allocation per column and batch, not
// one per cell; other columns are formatted cell by cell, interned so
// that a column of few distinct values holds each once.
func FrameOf(t *Table) *Frame {
	f := &Frame{Columns: t.Columns, Rows: t.Rows, Values: make([][]string, len(t.Columns)), Null: make([][]bool, len(t.Columns))}
	for c := range t.Columns {
		f.Values[c] = make([]string, t.Rows)
		f.Null[c] = make([]bool, t.Rows)
	}
	interned := make([]map[string]string, len(t.Columns))
	at := 0
	for _, b := range t.batches {
		n := int(b.NumRows())
		for c, a := range b.Columns() {
			values, null := f.Values[c][at:at+n], f.Null[c][at:at+n]
			if s, ok := a.(*array.String); ok {
				copyText(values, null, s)
				continue
			}
			if interned[c] == nil {
				interned[c] = map[string]string{}
			}
			for r := range n {
				values[r], null[r] = cell(a, r)
				if !null[r] {
					values[r] = intern(interned[c], values[r])
				}
			}
		}
		at += n
	}
	return f
}

// copyText fills values and null from a, as cell reads them, with strings
// that share one copy of a's value buffer.
func copyText(values []string, null []bool, a *array.String) {
	offsets := a.ValueOffsets()
	if len(offsets) == 0 {
		for r := range values {
			null[r] = true
		}
		return
	}
	base := offsets[0]
	text := string(a.ValueBytes())
	for r := range values {
		if a.IsNull(r) {
			null[r] = true
			continue
		}
		values[r] = text[offsets[r]-base : offsets[r+1]-base]
		null[r] = isMissing(values[r])
	}
}

// intern returns the copy of s held in m, adding one (the table's strings
// point into Arrow buffers that are released).
func intern(m map[string]string, s string) string {
	if v, ok := m[s]; ok {
		return v
	}
	if len(m) > 4096 {
		return strings.Clone(s)
	}
	v := strings.Clone(s)
	m[v] = v
	return v
}

func newFrame(cols []Column, rows int) *Frame {
	f := &Frame{Columns: cols, Rows: int64(rows), Values: make([][]string, len(cols)), Null: make([][]bool, len(cols))}
	for i := range cols {
		f.Values[i] = make([]string, 0, rows)
		f.Null[i] = make([]bool, 0, rows)
	}
	return f
}

// snapshotDoc is a snapshot as Table.JSON writes it.
type snapshotDoc struct {
	Columns []Column                     `json:"columns"`
	Records []map[string]json.RawMessage `json:"records"`
	Rows    int64                        `json:"rows"`
}

// DecodeFrame reads a snapshot (as Table.JSON writes it) into a Frame.
// It is the slow path, for data not loaded by this process.
func DecodeFrame(data []byte) (*Frame, error) {
	var doc snapshotDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("refresh: read the snapshot: %w", err)
	}
	f := newFrame(doc.Columns, len(doc.Records))
	for _, rec := range doc.Records {
		for c, col := range doc.Columns {
			raw := rec[col.Name]
			s, null := rawText(raw)
			f.Values[c] = append(f.Values[c], s)
			f.Null[c] = append(f.Null[c], null)
		}
	}
	return f, nil
}

// rawText is a JSON scalar's text: a string's content, a number or boolean
// as written.
func rawText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, false
		}
	}
	return string(raw), false
}

// JSON is the frame in the snapshot format an artifact reads at its
// injection point: {"columns":[…],"records":[{…}],"rows":N}, plus extra
// members (each a JSON value) when given.
func (f *Frame) JSON(extra map[string][]byte) []byte {
	buf := make([]byte, 0, 256+int(f.Rows)*len(f.Columns)*12)
	buf = appendColumns(buf, f.Columns)
	names := keys(f.Columns)
	buf = append(buf, `,"records":[`...)
	for r := 0; r < int(f.Rows); r++ {
		if r > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '{')
		for c := range f.Columns {
			if c > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, names[c]...)
			buf = f.appendCell(buf, c, r)
		}
		buf = append(buf, '}')
	}
	buf = append(buf, `],"rows":`...)
	buf = strconv.AppendInt(buf, f.Rows, 10)
	return appendExtra(buf, extra)
}

// Columnar is a frame encoded by column, compact for sending to a view,
// in two JSON texts. Data is
//
//	{"columns":[{"name":…,"type":…}],"rows":N,"values":[column…]}
//
// where a column is the array of its values when they are text (a text,
// date or timestamp column), {"dict":[value…]} when it is such a column
// that repeats its values, and null otherwise. Numbers is
//
//	[column…]
//
// where a column is the array of its values when they are numbers or
// booleans, the array of its codes into its dictionary (-1 for null) when
// it has one, and null otherwise. Numbers holds no quote and no backslash,
// so that a client reading it as a JSON string copies it without
// unescaping it; it is most of the data. Values are written as the
// snapshot writes them; a view expands them into the snapshot's records
// (see Frame.JSON).
type Columnar struct {
	Data    []byte
	Numbers []byte
}

// Columnar encodes the frame by column, with extra's members added to
// Data.
func (f *Frame) Columnar(extra map[string][]byte) Columnar {
	data := make([]byte, 0, 256)
	nums := make([]byte, 0, 16+int(f.Rows)*len(f.Columns)*6)
	data = appendColumns(data, f.Columns)
	data = append(data, `,"rows":`...)
	data = strconv.AppendInt(data, f.Rows, 10)
	data = append(data, `,"values":[`...)
	nums = append(nums, '[')
	for c, col := range f.Columns {
		if c > 0 {
			data = append(data, ',')
			nums = append(nums, ',')
		}
		switch col.Type {
		case TypeText, TypeDate, TypeTimestamp:
			if d, n, ok := f.appendDict(data, nums, c); ok {
				data, nums = d, n
				continue
			}
			data = f.appendValues(data, c)
			nums = append(nums, "null"...)
		default:
			data = append(data, "null"...)
			nums = f.appendValues(nums, c)
		}
	}
	data = append(data, ']')
	return Columnar{Data: appendExtra(data, extra), Numbers: append(nums, ']')}
}

// appendValues appends column c's values as a JSON array.
func (f *Frame) appendValues(buf []byte, c int) []byte {
	buf = append(buf, '[')
	for r := 0; r < int(f.Rows); r++ {
		if r > 0 {
			buf = append(buf, ',')
		}
		buf = f.appendCell(buf, c, r)
	}
	return append(buf, ']')
}

// appendDict appends column c dictionary-encoded, its dictionary to data
// and its codes to nums, when it has at most half as many distinct values
// as rows.
func (f *Frame) appendDict(data, nums []byte, c int) ([]byte, []byte, bool) {
	codes := make([]int, f.Rows)
	index := map[string]int{}
	var dict []string
	for r, s := range f.Values[c] {
		if f.Null[c][r] {
			codes[r] = -1
			continue
		}
		i, ok := index[s]
		if !ok {
			if len(dict) >= max(1, int(f.Rows)/2) {
				return data, nums, false
			}
			i = len(dict)
			index[s] = i
			dict = append(dict, s)
		}
		codes[r] = i
	}
	data = append(data, `{"dict":[`...)
	for i, s := range dict {
		if i > 0 {
			data = append(data, ',')
		}
		data = appendValueText(data, s, f.Columns[c].Type)
	}
	data = append(data, "]}"...)
	nums = append(nums, '[')
	for r, code := range codes {
		if r > 0 {
			nums = append(nums, ',')
		}
		nums = strconv.AppendInt(nums, int64(code), 10)
	}
	return data, append(nums, ']'), true
}

func (f *Frame) appendCell(buf []byte, c, r int) []byte {
	if f.Null[c][r] || f.Columns[c].Type == TypeEmpty {
		return append(buf, "null"...)
	}
	return appendValueText(buf, f.Values[c][r], f.Columns[c].Type)
}

func appendColumns(buf []byte, cols []Column) []byte {
	buf = append(buf, `{"columns":[`...)
	for i, c := range cols {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"name":`...)
		buf = appendString(buf, c.Name)
		buf = append(buf, `,"type":`...)
		buf = appendString(buf, c.Type)
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// keys are the columns' names as JSON object keys, with the colon.
func keys(cols []Column) [][]byte {
	names := make([][]byte, len(cols))
	for i, c := range cols {
		names[i] = append(appendString(nil, c.Name), ':')
	}
	return names
}

// appendExtra appends members in a fixed order and closes the object.
func appendExtra(buf []byte, extra map[string][]byte) []byte {
	for _, k := range sortedKeys(extra) {
		buf = append(buf, ',')
		buf = appendString(buf, k)
		buf = append(buf, ':')
		buf = append(buf, extra[k]...)
	}
	return append(buf, '}')
}
