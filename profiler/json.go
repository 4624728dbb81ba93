package profiler

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/selmem/selmem/internal/textcut"
)

// jsonReader turns a stream of JSON objects (a JSON array or JSON Lines)
// into Arrow batches of string columns. Nested objects are flattened one
// level with dotted names; deeper values and arrays become JSON text. A
// value longer than maxField bytes is cut there (with a warning), as a
// CSV field is.
type jsonReader struct {
	next      func() ([]field, error) // one record's flattened fields in source order; io.EOF at the end
	format    string
	maxField  int
	names     []string
	index     map[string]int
	schema    *arrow.Schema // of names; nil when a name was added
	b         strBatch
	fields    []field // the record being read
	pending   []field // a record read for the next batch, or nil
	rec       arrow.RecordBatch
	err       error
	warns     []string
	nonObj    int64
	truncated int64
}

// newJSONReaderOf returns a jsonReader of format that cuts values at
// maxField bytes (0: DefaultMaxFieldBytes); its caller sets next.
func newJSONReaderOf(format string, maxField int) *jsonReader {
	if maxField <= 0 {
		maxField = DefaultMaxFieldBytes
	}
	return &jsonReader{index: map[string]int{}, format: format, maxField: maxField}
}

// newJSONReader reads a JSON array of records or JSON Lines from r,
// cutting values at maxField bytes (0: DefaultMaxFieldBytes).
func newJSONReader(r io.Reader, maxField int) (*jsonReader, error) {
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
	j := newJSONReaderOf("jsonl", maxField)
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

// field is one flattened column value of a JSON record. name and value
// may share the record's bytes: they are good until the next record,
// and Next copies them into its batch. cut marks a value cut at the
// field size limit.
type field struct {
	name, value string
	cut         bool
}

func (j *jsonReader) decodeOne(dec *json.Decoder) ([]field, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("profiler: invalid JSON at byte %d: %w", dec.InputOffset(), err)
	}
	return j.record(raw), nil
}

// record flattens one record, valid JSON; a value that is not an object
// becomes column "value".
func (j *jsonReader) record(raw []byte) []field {
	j.fields = j.fields[:0]
	if len(raw) == 0 || raw[0] != '{' {
		j.nonObj++
		v, cut := scalarText(raw, j.maxField)
		j.fields = append(j.fields, field{"value", v, cut})
		return j.fields
	}
	j.flatten("", raw, 0)
	return j.fields
}

// newRawJSONReader reads the records of the JSON array arr, valid JSON
// (the REST case), one at a time and in place, so columns come in the
// order their members appear.
func newRawJSONReader(arr []byte, maxField int) *jsonReader {
	j := newJSONReaderOf("json", maxField)
	items := elements(arr)
	j.next = func() ([]field, error) {
		item, ok := items.next()
		if !ok {
			return nil, io.EOF
		}
		return j.record(item), nil
	}
	return j
}

// flatten appends the members of the JSON object raw (valid JSON) to
// j.fields in source order: objects at the top level are flattened one
// level with dotted names, deeper objects and arrays become compact JSON
// text, nulls are left out.
func (j *jsonReader) flatten(prefix string, raw []byte, depth int) {
	for k, v := range members(raw) {
		name := stringText(k)
		if prefix != "" {
			name = prefix + "." + name
		}
		switch {
		case len(v) == 0 || string(v) == "null":
		case v[0] == '{' && depth == 0:
			j.flatten(name, v, 1)
		default:
			s, cut := scalarText(v, j.maxField)
			j.fields = append(j.fields, field{name, s, cut})
		}
	}
}

// scalarText is a JSON value (valid JSON) as profiled text: strings
// unquoted, numbers and booleans as written, objects and arrays as
// compact JSON, as json.Compact writes it. A text longer than limit
// bytes is cut there at a rune boundary (cut). The text may share v's
// bytes.
func scalarText(v []byte, limit int) (text string, cut bool) {
	if len(v) > 0 && v[0] == '"' {
		text = stringText(v)
	} else {
		text = compactText(v, limit+utf8.UTFMax)
	}
	if len(text) > limit {
		return textcut.Prefix(text, limit), true
	}
	return text, false
}

// stringText is the text of the JSON string s (valid JSON, quoted): s's
// own bytes when it has no escape and is valid UTF-8.
func stringText(s []byte) string {
	if len(s) < 2 {
		return ""
	}
	in := s[1 : len(s)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return unsafeString(in)
	}
	var out string
	if json.Unmarshal(s, &out) != nil {
		return string(in)
	}
	return out
}

// compactText is v (valid JSON) without the spaces outside its strings,
// as json.Compact writes it, and no longer than about limit bytes: a
// longer text is cut after limit bytes or more. It is v's own bytes when
// v has no such space.
func compactText(v []byte, limit int) string {
	var out []byte // nil while no space was dropped
	from := 0      // v[from:i] is still to copy to out
	inStr := false
	i := 0
	for ; i < len(v) && len(out)+i-from <= limit; i++ {
		switch c := v[i]; {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if out == nil {
				out = make([]byte, 0, min(len(v), limit+1))
			}
			out = append(out, v[from:i]...)
			from = i + 1
		}
	}
	i = min(i, len(v))
	if out == nil {
		return unsafeString(v[:i])
	}
	return unsafeString(append(out, v[from:i]...))
}

// unsafeString is b as a string without a copy; b must not change while
// the string is in use.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// JSON known to be valid (checked by json.Valid, or decoded by a
// json.Decoder) is walked in place: members and elements find a value's
// extent without decoding it, which a value of millions of numbers or
// keys would cost a copy of, or millions of allocations. On invalid JSON
// they stop early or yield odd slices, never reading out of bounds.

// skipSpace returns the index of the first byte at or after i of b that
// is not JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at b[i],
// which is not whitespace.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the JSON string starting at the
// quote b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		q := j + k
		// escaped when after an odd run of backslashes
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// members yields the raw key (quoted) and value of each member of the
// JSON object obj, in order.
func members(obj []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(key, value []byte) bool) {
		i := skipSpace(obj, 0)
		if i >= len(obj) || obj[i] != '{' {
			return
		}
		i++
		for {
			i = skipSpace(obj, i)
			if i >= len(obj) || obj[i] != '"' {
				return
			}
			ke := stringEnd(obj, i)
			key := obj[i:ke]
			i = skipSpace(obj, ke)
			if i >= len(obj) || obj[i] != ':' {
				return
			}
			i = skipSpace(obj, i+1)
			if i >= len(obj) {
				return
			}
			ve := valueEnd(obj, i)
			if !yield(key, obj[i:ve]) {
				return
			}
			i = skipSpace(obj, ve)
			if i >= len(obj) || obj[i] != ',' {
				return
			}
			i++
		}
	}
}

// elementIter yields the elements of a JSON array one at a time.
type elementIter struct {
	b []byte
	i int
}

// elements starts yielding the elements of the JSON array arr.
func elements(arr []byte) *elementIter {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return &elementIter{}
	}
	return &elementIter{b: arr, i: i + 1}
}

func (e *elementIter) next() ([]byte, bool) {
	i := skipSpace(e.b, e.i)
	if i < len(e.b) && e.b[i] == ',' {
		i = skipSpace(e.b, i+1)
	}
	if i >= len(e.b) || e.b[i] == ']' {
		e.i = len(e.b)
		return nil, false
	}
	end := valueEnd(e.b, i)
	e.i = end
	return e.b[i:end], true
}

// newSliceJSONReader reads records already decoded (NewRecordsReader);
// their members come in name order, since a decoded object keeps no order.
func newSliceJSONReader(items []any) *jsonReader {
	j := newJSONReaderOf("json", 0)
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
			out = append(out, field{name: k, value: v})
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

// jsonBatchRows is the most records a JSON batch holds.
const jsonBatchRows = 8192

func (j *jsonReader) Next() bool {
	if j.rec != nil {
		j.rec.Release()
		j.rec = nil
	}
	if j.err != nil {
		return false
	}
	b := &j.b
	for b.rows < jsonBatchRows && b.size(b.live) < batchBytes {
		fs := j.pending
		if fs == nil {
			var err error
			if fs, err = j.next(); err == io.EOF {
				break
			} else if err != nil {
				j.err = err
				return false
			}
		}
		// A record that sets columns the batch has none of pads each
		// row before as their nulls: it starts the next batch when
		// that would make this one too large.
		opens := 0
		for _, f := range fs {
			if ci, ok := j.index[f.name]; !ok || b.cols[ci].offs == nil {
				opens++
			}
		}
		if b.rows > 0 && b.size(b.live+opens) >= batchBytes {
			j.pending = fs
			break
		}
		j.pending = nil
		for _, f := range fs {
			// columns in the order they first appear
			ci, ok := j.index[f.name]
			if !ok {
				if len(j.names) == MaxColumns {
					// Refused before a batch of every column by every row
					// is built.
					j.err = errTooManyColumns
					return false
				}
				ci = len(j.names)
				name := strings.Clone(f.name)
				j.index[name] = ci
				j.names = append(j.names, name)
				j.schema = nil
				b.widen(len(j.names))
			}
			if f.cut || len(f.value) > j.maxField {
				f.value = textcut.Prefix(f.value, j.maxField)
				j.truncated++
			}
			b.set(ci, f.value)
		}
		b.endRow()
	}
	if b.rows == 0 {
		if j.nonObj > 0 {
			j.warns = append(j.warns, fmt.Sprintf("%d records were not objects (profiled as column \"value\")", j.nonObj))
			j.nonObj = 0
		}
		if j.truncated > 0 {
			j.warns = append(j.warns, fmt.Sprintf("%d fields exceeded the field size limit and were truncated", j.truncated))
			j.truncated = 0
		}
		return false
	}
	if j.schema == nil {
		fields := make([]arrow.Field, len(j.names))
		for ci, name := range j.names {
			fields[ci] = arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true}
		}
		j.schema = arrow.NewSchema(fields, nil)
	}
	j.rec, _ = b.build(j.schema, false)
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
