package refresh

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/selmem/selmem/profiler"
)

// Column types of a snapshot, from narrowest to widest where one widens
// into another.
const (
	TypeEmpty     = "empty" // every value null: no type yet
	TypeInteger   = "integer"
	TypeNumber    = "number"
	TypeBoolean   = "boolean"
	TypeDate      = "date"      // YYYY-MM-DD
	TypeTimestamp = "timestamp" // RFC 3339 or YYYY-MM-DD hh:mm[:ss]
	TypeText      = "text"
)

// Types lists the column types.
var Types = []string{TypeInteger, TypeNumber, TypeBoolean, TypeDate, TypeTimestamp, TypeText, TypeEmpty}

func knownType(t string) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// Table is a data set loaded through a connector, held as the reader's
// Arrow record batches. Release it when done.
type Table struct {
	Columns []Column
	Rows    int64
	Info    profiler.ReaderInfo
	batches []arrow.RecordBatch
	bytes   int64
}

// Release frees the table's batches.
func (t *Table) Release() {
	for _, b := range t.batches {
		b.Release()
	}
	t.batches = nil
}

// TooLargeError reports data beyond the configured snapshot size.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("Error: the data is larger than the snapshot limit of %d MiB. Narrow the connector (a query with fewer rows or columns, a smaller file) or ask the user to raise refresh.max_snapshot_bytes.", e.Limit>>20)
}

// Load reads src to the end, keeping its batches, and types its columns.
// It stops with a *TooLargeError once the text of the cells passes limit
// bytes (0: no limit).
func Load(ctx context.Context, src profiler.Source, limit int64) (*Table, error) {
	return load(ctx, src, limit, nil)
}

// load is Load telling progress, when not nil, the bytes read so far and
// the total after each batch.
func load(ctx context.Context, src profiler.Source, limit int64, progress func(read, total int64)) (*Table, error) {
	rr, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	t := &Table{}
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			t.Release()
			return nil, err
		}
		rec := rr.RecordBatch()
		rec.Retain()
		t.batches = append(t.batches, rec)
		t.Rows += rec.NumRows()
		t.bytes += batchBytes(rec)
		if limit > 0 && t.bytes > limit {
			t.Release()
			return nil, &TooLargeError{Limit: limit}
		}
		if progress != nil {
			progress(rr.Progress())
		}
	}
	if err := rr.Err(); err != nil {
		t.Release()
		return nil, err
	}
	t.Info = rr.Info()
	if len(t.batches) > 0 {
		t.Columns = typeColumns(t.batches)
	}
	return t, nil
}

// batchBytes estimates the bytes of a batch's cells.
func batchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		for _, b := range c.Data().Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
	}
	return n
}

// typeColumns decides each column's type from every value, a goroutine per
// column.
func typeColumns(batches []arrow.RecordBatch) []Column {
	schema := batches[0].Schema()
	cols := make([]Column, schema.NumFields())
	done := make(chan struct{}, len(cols))
	for i := range cols {
		go func() {
			defer func() { done <- struct{}{} }()
			t := TypeEmpty
			for _, b := range batches {
				t = widen(t, arrayType(b.Column(i)))
				if t == TypeText {
					break
				}
			}
			cols[i] = Column{Name: schema.Field(i).Name, Type: t}
		}()
	}
	for range cols {
		<-done
	}
	return cols
}

// arrayType is the type of an array's non-null values.
func arrayType(a arrow.Array) string {
	switch a.DataType().ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return nonEmpty(a, TypeInteger)
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256:
		return nonEmpty(a, TypeNumber)
	case arrow.BOOL:
		return nonEmpty(a, TypeBoolean)
	case arrow.DATE32, arrow.DATE64:
		return nonEmpty(a, TypeDate)
	case arrow.TIMESTAMP:
		return nonEmpty(a, TypeTimestamp)
	}
	t := TypeEmpty
	for i := 0; i < a.Len(); i++ {
		s, null := cell(a, i)
		if null {
			continue
		}
		t = widen(t, valueType(s))
		if t == TypeText {
			break
		}
	}
	return t
}

func nonEmpty(a arrow.Array, t string) string {
	if a.NullN() == a.Len() {
		return TypeEmpty
	}
	return t
}

// widen joins two column types: the narrowest type holding both.
func widen(a, b string) string {
	switch {
	case a == b || b == TypeEmpty:
		return a
	case a == TypeEmpty:
		return b
	case a == TypeInteger && b == TypeNumber, a == TypeNumber && b == TypeInteger:
		return TypeNumber
	case a == TypeDate && b == TypeTimestamp, a == TypeTimestamp && b == TypeDate:
		return TypeTimestamp
	}
	return TypeText
}

// compatible reports whether data of type now can stand where the program
// expects type was: the same type, a safe widening (integer to number, date
// to timestamp) or its reverse (whole numbers in a number column), or a
// column with no values this time.
func compatible(was, now string) bool {
	if was == now || was == TypeEmpty || now == TypeEmpty {
		return true
	}
	w := widen(was, now)
	return w == TypeNumber || w == TypeTimestamp
}

// cell is the text of a[i]; null for a null value or a conventional
// missing-value marker.
func cell(a arrow.Array, i int) (string, bool) {
	if a.IsNull(i) {
		return "", true
	}
	var s string
	switch v := a.(type) {
	case *array.String:
		s = v.Value(i)
	case *array.LargeString:
		s = v.Value(i)
	case *array.Timestamp:
		unit := v.DataType().(*arrow.TimestampType).Unit
		return v.Value(i).ToTime(unit).UTC().Format(time.RFC3339Nano), false
	case *array.Date32:
		return v.Value(i).ToTime().Format(time.DateOnly), false
	case *array.Date64:
		return v.Value(i).ToTime().Format(time.DateOnly), false
	case *array.Float64:
		return strconv.FormatFloat(v.Value(i), 'g', -1, 64), false
	case *array.Float32:
		return strconv.FormatFloat(float64(v.Value(i)), 'g', -1, 32), false
	default:
		return a.ValueStr(i), false
	}
	return s, isMissing(s)
}

// isMissing reports an empty cell or a conventional missing-value marker.
func isMissing(s string) bool {
	switch s {
	case "", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL", "Null", "None", "none", "#N/A", "nil", "?":
		return true
	}
	return false
}

// valueType is the type of one non-null text value.
func valueType(s string) string {
	switch {
	case isInteger(s):
		return TypeInteger
	case isNumber(s):
		return TypeNumber
	case s == "true" || s == "false" || s == "TRUE" || s == "FALSE" || s == "True" || s == "False":
		return TypeBoolean
	case isDate(s):
		return TypeDate
	case isTimestamp(s):
		return TypeTimestamp
	}
	return TypeText
}

// isInteger: an optional minus and 1 to 18 digits without a leading zero,
// which is also a JSON number. Codes such as 007 are text.
func isInteger(s string) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || d[0] == '0' && len(d) > 1 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// isNumber: a finite decimal number written with digits, an optional
// sign, point and exponent (not 0x1p3, Inf or 1_000), with no leading zero
// before other digits. The grammar is checked by hand; only an exponent
// large enough to overflow needs strconv.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intDigits := i - start
	if intDigits > 1 && s[start] == '0' {
		return false
	}
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		fracDigits = i - f
	}
	if intDigits+fracDigits == 0 {
		return false
	}
	if i == len(s) {
		return true
	}
	if s[i] != 'e' && s[i] != 'E' {
		return false
	}
	i++
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	e := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != len(s) || i == e {
		return false
	}
	if i-e < 3 {
		return true // |exponent| < 100 cannot overflow
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(f, 0)
}

// isDate: YYYY-MM-DD, a real calendar day.
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return false
	}
	// The last day of month m: day 0 of the next month.
	return d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// digits parses a short run of ASCII digits.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

var timestampLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02 15:04", "2006-01-02T15:04:05.999999999", "2006-01-02T15:04"}

func isTimestamp(s string) bool {
	if len(s) < 16 || !isDate(s[:10]) || s[10] != 'T' && s[10] != ' ' {
		return false
	}
	for _, l := range timestampLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return true
		}
	}
	return false
}

// JSON renders the table as a snapshot: {"columns": [...], "records":
// [...], "rows": n}, values typed by their column (numbers and booleans as
// JSON numbers and booleans, everything else as strings, missing values as
// null). Strings escape <, > and & so the bytes can be placed inside an
// HTML script element as they are.
func (t *Table) JSON() []byte {
	buf := make([]byte, 0, t.bytes+t.Rows*int64(8*len(t.Columns)+2)+256)
	buf = appendColumns(buf, t.Columns)
	names := keys(t.Columns)
	buf = append(buf, `,"records":[`...)
	first := true
	for _, b := range t.batches {
		cols := b.Columns()
		for r := 0; r < int(b.NumRows()); r++ {
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = append(buf, '{')
			for i, a := range cols {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, names[i]...)
				buf = appendValue(buf, a, r, t.Columns[i].Type)
			}
			buf = append(buf, '}')
		}
	}
	buf = append(buf, `],"rows":`...)
	buf = strconv.AppendInt(buf, t.Rows, 10)
	return append(buf, '}')
}

func appendValue(buf []byte, a arrow.Array, i int, typ string) []byte {
	s, null := cell(a, i)
	if null {
		return append(buf, "null"...)
	}
	return appendValueText(buf, s, typ)
}

// appendValueText appends the non-null value s of a column of type typ.
func appendValueText(buf []byte, s, typ string) []byte {
	switch typ {
	case TypeInteger:
		if isInteger(s) {
			return append(buf, s...)
		}
		fallthrough // not as typed (a snapshot changed by hand): as a number or null
	case TypeNumber:
		if isNumber(s) && isJSONNumber(s) {
			return append(buf, s...)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return append(buf, "null"...)
		}
		return strconv.AppendFloat(buf, f, 'g', -1, 64)
	case TypeBoolean:
		if s != "" && (s[0] == 't' || s[0] == 'T') {
			return append(buf, "true"...)
		}
		return append(buf, "false"...)
	}
	return appendString(buf, s)
}

// isJSONNumber reports whether a number (isNumber) is also valid JSON as
// written (no leading +, no bare or trailing point, no NaN).
func isJSONNumber(s string) bool {
	if s == "" || s[0] == '+' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == 'e', c == 'E':
		case c == '.':
			if i == 0 || s[i-1] < '0' || s[i-1] > '9' || i+1 == len(s) || s[i+1] < '0' || s[i+1] > '9' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaping what HTML gives a
// meaning to inside a script element and what JavaScript treats as a line
// end. Invalid UTF-8 becomes U+FFFD.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			if r == utf8.RuneError {
				buf = append(buf, `\ufffd`...)
			} else {
				buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// replay is a profiler.Source over a table's batches, so the data read
// once for the snapshot is profiled without reading it again.
type replay struct{ t *Table }

// Replay is a profiler.Source reading t's batches again; t must not be
// released before the source is read.
func Replay(t *Table) profiler.Source { return replay{t} }

func (r replay) Open(context.Context) (profiler.RecordReader, error) {
	return &replayReader{t: r.t, i: -1}, nil
}

type replayReader struct {
	t *Table
	i int
}

func (r *replayReader) Next() bool                     { r.i++; return r.i < len(r.t.batches) }
func (r *replayReader) RecordBatch() arrow.RecordBatch { return r.t.batches[r.i] }
func (r *replayReader) Err() error                     { return nil }
func (r *replayReader) Release()                       {}
func (r *replayReader) Progress() (int64, int64)       { return 0, 0 }
func (r *replayReader) Info() profiler.ReaderInfo      { return r.t.Info }
