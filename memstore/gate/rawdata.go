package gate

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// minDataRows is how many records in a row make content raw data: rows of
// a delimited table (CSV, TSV, a markdown table, SQL value tuples) with the
// same number of fields, or JSON objects one a line (JSON Lines, an array
// of records). A table of reference values a rule needs stays well below.
const minDataRows = 100

// rawDataHint is the refusal's hint.
const rawDataHint = "Nothing was written. Memory keeps what data means, not the data: profile the source with profile_source " +
	"(or selmem profile) and keep the profile, with a few example rows at most."

// findRawData returns the refusal of content holding raw data, or nil:
// minDataRows records in a row (see rowScanner), in the content or in its
// fenced code blocks read as one (see fencedStream), or a fenced block
// holding a JSON array of records, or blocks holding such arrays with the
// same fields (see fencedBlock). The join sketches profile_source keeps
// beside a profile (isJoinSketches) hold hashes and counts, not data.
func findRawData(content []byte) *Rejection {
	var all, fenced rowScanner
	var fence fencedBlock
	var stream fencedStream
	lineNo := 0
	for off := 0; off < len(content); {
		var line []byte
		line, off = nextLine(content, off)
		lineNo++
		body := fence.open()
		if r := fence.line(lineNo, line); r != nil {
			return r
		}
		what, start := all.line(lineNo, line)
		if body && fence.open() {
			if n, ok := stream.add(lineNo, line); ok && what == "" {
				if what, start = fenced.line(n, line); what != "" {
					what, start = what+" in code blocks", stream.origin[start-1]
				}
			}
		}
		switch {
		case what == "":
		case what == tableRows && isJoinSketches(content):
			return nil
		default:
			return rawDataRejection(what, start)
		}
	}
	return nil
}

// tableRows is what a rowScanner reports for a run of table rows.
const tableRows = "rows of a table"

// A rowScanner finds runs of records in a stream of lines: a run of lines
// with one delimiter (",", tab, ";" or "|", outside double quotes, or
// columns aligned with blanks) as many times each, or give or take a few
// (see maxRaggedSpread) on rows whose fields are values rather than
// phrases (see hasWordyField) or that start with a key, as rows of an
// export with free-text fields do (see isKeyedRow), also when a quoted
// field holds line breaks (see quotedRow); of lines each holding
// one JSON object; or of records written one field a line (see
// recordRun). A blank line ends a run, and so do a markdown list item
// (the lines of a profile, one a column, hold as many semicolons each) and
// a sentence's end (prose, however regular), unless the line is a row of
// values with a bullet or a full stop added (see isDataRow) or a keyed
// row whose last field ends a sentence.
type rowScanner struct {
	table, objects run
	objectFields   recordProfile // the fields of the objects run
	quoted         quotedRow
	records        recordRun
	delim          byte
	fewest, most   int // delimiters on the rows of the table run
}

// maxRaggedSpread returns how many more delimiters than the fewest, fewest,
// a row of a table may hold: rows of a dump differ by an empty trailing
// field or a comma inside an unquoted value, and keyed rows (see
// isKeyedRow) by the commas of a free-text field, as many as it has
// fields.
func maxRaggedSpread(fewest int, keyed bool) int {
	if keyed {
		return max(4, fewest)
	}
	return max(2, fewest/2)
}

// line reads line n and returns what kind of records, once minDataRows of
// them are in a run with it, and the line the run starts on; "" for none.
func (s *rowScanner) line(n int, line []byte) (what string, start int) {
	if start := s.records.line(n, line); start > 0 {
		return "records of the same fields", start
	}
	t := bytes.TrimSpace(line)
	object := len(t) > 1 && t[0] == '{' && (t[len(t)-1] == '}' || bytes.HasSuffix(t, []byte("},")))
	if object {
		s.tableRow(n, n, nil) // the objects run reads it
	} else if row, first, ok := s.quoted.row(n, line); ok {
		if s.tableRow(first, n, row) {
			return tableRows, s.table.start
		}
	} else if row == nil {
		s.tableRow(n, n, nil) // a quoted field that does not end
	}
	if !object {
		s.objects = run{}
		return "", 0
	}
	if s.objects.start == 0 {
		s.objectFields = recordProfile{}
	}
	s.objectFields.addJSON(bytes.TrimSuffix(t, []byte(",")))
	if s.objects.add(n) >= minDataRows && !s.objectFields.isConfigList() {
		return "JSON records, one a line,", s.objects.start
	}
	return "", 0
}

// tableRow reads row, a row of a table on lines first to last (nil for a
// line that is none), and reports whether the table run now holds
// minDataRows rows.
func (s *rowScanner) tableRow(first, last int, row []byte) bool {
	counts := delimiterCounts(row)
	d, k := delimiterOf(counts)
	if i := strings.IndexByte(delimiterSet, s.delim); i >= 0 && d != s.delim && counts[i] >= max(2, s.fewest) {
		// A free-text field holds more commas than the run's delimiter.
		d, k = s.delim, counts[i]
	}
	if row != nil && k == 0 && isDataRow(row, ' ') {
		// Columns aligned with blanks: 2024-01-03   45.2   12
		d, k = ' ', countWords(row)
	}
	keyed := k > 0 && isKeyedRow(row, d)
	if (isListItem(row) || endsSentence(row) && !keyed) && !isDataRow(row, d) {
		k = 0
	}
	if !s.continues(row, d, k, keyed) {
		s.table, s.fewest, s.most = run{}, k, k
	}
	s.delim, s.fewest, s.most = d, min(s.fewest, k), max(s.most, k)
	if k == 0 {
		return false
	}
	rows := s.table.add(first)
	s.table.last = last
	return rows >= minDataRows
}

// continues reports whether row, with k delimiters d, continues the
// table run: the same delimiter as many times as every row before, or
// give or take a few (see maxRaggedSpread) when its fields are values or
// it is keyed (see isKeyedRow).
func (s *rowScanner) continues(row []byte, d byte, k int, keyed bool) bool {
	if k == 0 || d != s.delim {
		return false
	}
	if k == s.fewest && k == s.most {
		return true
	}
	return max(s.most, k)-min(s.fewest, k) <= maxRaggedSpread(min(s.fewest, k), keyed) && (keyed || !hasWordyField(row, d))
}

// Bounds of a row whose quoted field runs over lines (see quotedRow).
const (
	maxRowLines = 20
	maxRowBytes = 4 << 10
)

// A quotedRow joins the lines of a row of a CSV export whose quoted
// field holds line breaks ("cannot log in,\nsays the link expired"),
// so the row counts as one: a line with an odd number of double quotes
// and a delimiter before the first opens one, and the lines up to the one
// that balances the quotes, at most maxRowLines and maxRowBytes, close
// it.
type quotedRow struct {
	buf   []byte
	first int // the line the open row starts on
	lines int // 0 when no row is open
}

// row reads line n and returns the row it completes and the line that
// row starts on: line itself when no row is open and line opens none, or
// the joined row when line closes one; ok is false while a row is open,
// and row nil too when an open row grew past its bounds and was dropped.
func (q *quotedRow) row(n int, line []byte) (row []byte, first int, ok bool) {
	if q.lines == 0 {
		i := bytes.IndexByte(line, '"')
		if i < 0 || bytes.Count(line, []byte{'"'})%2 == 0 || bytes.IndexAny(line[:i], delimiterSet) < 0 {
			return line, n, true
		}
		q.buf, q.first, q.lines = append(q.buf[:0], line...), n, 1
		return q.buf, 0, false
	}
	q.buf = append(append(q.buf, '\n'), line...)
	q.lines++
	if bytes.Count(line, []byte{'"'})%2 == 1 {
		q.lines = 0
		return q.buf, q.first, true
	}
	if q.lines >= maxRowLines || len(q.buf) > maxRowBytes {
		q.lines = 0
		return nil, 0, false
	}
	return q.buf, 0, false
}

// hasWordyField reports whether a field of line, split at d, holds three or
// more words, as wrapped prose does and rows of values do not.
func hasWordyField(line []byte, d byte) bool {
	for rest := line; d != ' ' && len(rest) > 0; {
		var f []byte
		f, rest = cutAt(rest, bytes.IndexByte(rest, d), 1)
		if countWords(f) >= 3 {
			return true
		}
	}
	return false
}

// isKeyedRow reports whether line, split at d outside double quotes,
// starts as a row of an export does: its first field is a key (see
// isKeyField) and its second a value of at most two words ("1042,
// 2026-03-01 09:12, open, ...", "C-0300,Alice Smith,Berlin,..."). Prose
// starts with words ("The export, which runs nightly, ...", "2024, the
// year we moved, ...").
func isKeyedRow(line []byte, d byte) bool {
	if d == ' ' {
		return false
	}
	first, rest := nextField(bytes.TrimSpace(line), d)
	if rest == nil || !isKeyField(first) {
		return false
	}
	second, _ := nextField(rest, d)
	n := countWords(second)
	return n >= 1 && n <= 2
}

// nextField splits b at the first d outside double quotes into the
// trimmed field before it and the rest; rest is nil when b holds no d.
func nextField(b []byte, d byte) (field, rest []byte) {
	quoted := false
	for i, c := range b {
		switch {
		case c == '"':
			quoted = !quoted
		case c == d && !quoted:
			return bytes.TrimSpace(b[:i]), b[i+1:]
		}
	}
	return bytes.TrimSpace(b), nil
}

// isKeyField reports a field that keys a row: one word of at most 64
// bytes that is a value (see isDatum) or holds a digit or an @, as ids,
// codes, dates and addresses do (1042, TCK-5000, C-0300,
// alice@example.com).
func isKeyField(f []byte) bool {
	f = bytes.Trim(f, `"'`)
	if len(f) == 0 || len(f) > 64 || bytes.ContainsAny(f, " \t") {
		return false
	}
	return isDatum(f) || bytes.ContainsAny(f, "0123456789@")
}

// A fencedStream is the bodies of a text's fenced code blocks, back to
// back, without the lines that only open or close a list (see
// reListDelimiter): records split over several blocks, each a list of its
// own (a CSV with its header, a JSON array, a YAML list under its key),
// read as one run.
type fencedStream struct {
	origin []int // the content line of each line of the stream
}

// reListDelimiter matches a line that only opens or closes a list: [, ],
// ], rows:, "items": [, {"items": [, ]}.
var reListDelimiter = regexp.MustCompile(`^\s*(?:\{?\s*"?[\w.-]{1,64}"?\s*:\s*\[?|\[|\]\s*\}?,?)\s*$`)

// add appends line n of the content to the stream and returns its line
// in the stream; ok is false for a line left out.
func (f *fencedStream) add(n int, line []byte) (int, bool) {
	if reListDelimiter.Match(line) {
		return 0, false
	}
	f.origin = append(f.origin, n)
	return len(f.origin), true
}

func rawDataRejection(what string, line int) *Rejection {
	return reject(RuleRawData, line,
		fmt.Sprintf("The content looks like raw data: %d or more %s starting at line %d.", minDataRows, what, line),
		rawDataHint)
}

// recordArray returns the length of the first array in v, a decoded JSON
// document, that holds minDataRows or more records: objects of scalar
// values alone, all with the same fields, as a dump of a table has, that
// are not a configuration list (see recordProfile.isConfigList); 0 for
// none. Configuration lists also hold nested values or differing fields.
func recordArray(v any) int {
	n, _ := flatArray(v, minDataRows)
	return n
}

// flatArray returns the length of the first array in v, a decoded JSON
// document, that holds least or more records (see recordArray), and their
// fields, sorted and joined; 0 for none.
func flatArray(v any, least int) (n int, fields string) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if n, fields := flatArray(v[k], least); n > 0 {
				return n, fields
			}
		}
	case []any:
		if len(v) >= least && sameFlatObjects(v) && !objectsProfile(v).isConfigList() {
			return len(v), strings.Join(slices.Sorted(maps.Keys(v[0].(map[string]any))), "\x00")
		}
		for _, x := range v {
			if n, fields := flatArray(x, least); n > 0 {
				return n, fields
			}
		}
	}
	return 0, ""
}

// sameFlatObjects reports whether every element of xs is an object of
// scalars with the fields of the first.
func sameFlatObjects(xs []any) bool {
	first, ok := xs[0].(map[string]any)
	if !ok {
		return false
	}
	for _, x := range xs {
		o, ok := x.(map[string]any)
		if !ok || len(o) != len(first) {
			return false
		}
		for k, val := range o {
			if _, ok := first[k]; !ok {
				return false
			}
			switch val.(type) {
			case map[string]any, []any:
				return false
			}
		}
	}
	return true
}

// isListItem reports whether line is a markdown bullet ("- ", "* ", "+ ").
func isListItem(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	return len(t) > 1 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' '
}

// endsSentence reports whether line ends with a full stop, question or
// exclamation mark, as rows of data do not.
func endsSentence(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r")
	return len(t) > 0 && strings.IndexByte(".?!", t[len(t)-1]) >= 0
}

// delimiterSet are the field delimiters of a table row, in the order
// delimiters prefers them.
const delimiterSet = ",\t;|"

// delimiterCounts counts each of delimiterSet in line outside double
// quotes.
func delimiterCounts(line []byte) (counts [len(delimiterSet)]int) {
	quoted := false
	for _, c := range line {
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted:
			if i := strings.IndexByte(delimiterSet, c); i >= 0 {
				counts[i]++
			}
		}
	}
	return counts
}

// delimiters returns the field delimiter of line, the one of ",", tab,
// ";" and "|" it holds most often outside double quotes, and how many
// times; 0 for a line holding fewer than two of any.
func delimiters(line []byte) (byte, int) {
	return delimiterOf(delimiterCounts(line))
}

// delimiterOf returns the delimiter counted most often in counts (see
// delimiterCounts) and its count; 0 for fewer than two of any.
func delimiterOf(counts [len(delimiterSet)]int) (byte, int) {
	best := 0
	for i := range counts {
		if counts[i] > counts[best] {
			best = i
		}
	}
	if counts[best] < 2 {
		return 0, 0
	}
	return delimiterSet[best], counts[best]
}

// Join sketches as profiler.TableProfile.JoinSketchesCSV writes them.
var (
	joinSketchesHeader = "column,type,unique,distinct,exact,hashes"
	reSketchType       = regexp.MustCompile(`^[a-z-]{1,20}$`)
	reSketchHashes     = regexp.MustCompile(`^(?:[0-9a-f]{16}(?: [0-9a-f]{16})*)?$`)
)

// isJoinSketches reports whether content is a file of join sketches: the
// header and, on every row, a column's name, its type, two booleans, a
// count and hashes of 16 hex digits. Only the names are free text.
func isJoinSketches(content []byte) bool {
	if !bytes.HasPrefix(content, []byte(joinSketchesHeader+"\n")) {
		return false
	}
	r := csv.NewReader(bytes.NewReader(content))
	r.FieldsPerRecord = 6
	recs, err := r.ReadAll()
	if err != nil {
		return false
	}
	for _, rec := range recs[1:] {
		_, uerr := strconv.ParseBool(rec[2])
		_, derr := strconv.ParseInt(rec[3], 10, 64)
		_, eerr := strconv.ParseBool(rec[4])
		if len(rec[0]) > 256 || !reSketchType.MatchString(rec[1]) || uerr != nil || derr != nil || eerr != nil ||
			!reSketchHashes.MatchString(rec[5]) {
			return false
		}
	}
	return true
}

// isDataRow reports whether line is a row of values all the same (used
// for list items, lines ending a sentence and lines without a delimiter):
// without its bullet and closing stop, no field (split at d; at runs of
// blanks for ' ', then with three fields or more) holds three or more
// words, and at least half of them, two or more, are values (see
// isDatum), also as key: value or key=value. "- 2024-01-03, 45.2, 12,
// ok" is one; "- Use UTC, not local time, in reports" and a profile line
// "- c1: integer; 250 distinct" are not.
func isDataRow(line []byte, d byte) bool {
	if d == 0 {
		return false
	}
	t := bytes.TrimSpace(line)
	if isListItem(t) {
		t = bytes.TrimSpace(t[2:])
	}
	t = bytes.TrimRight(t, ".?!")
	fields, values := 0, 0
	for rest := t; len(rest) > 0; {
		var f []byte
		if d == ' ' {
			if rest = bytes.TrimLeft(rest, " \t"); len(rest) == 0 {
				break
			}
			f, rest = cutAt(rest, bytes.IndexAny(rest, " \t"), 0)
		} else {
			f, rest = cutAt(rest, bytes.IndexByte(rest, d), 1)
		}
		fields++
		f = bytes.TrimSpace(f)
		if countWords(f) >= 3 {
			return false
		}
		if i := bytes.IndexAny(f, ":="); i > 0 && !isDatum(f) {
			f = bytes.TrimSpace(f[i+1:])
		}
		if isDatum(f) {
			values++
		}
	}
	return (d != ' ' || fields >= 3) && values >= 2 && 2*values >= fields
}

// cutAt splits b at index i (the whole of b when i < 0), skipping skip
// bytes after it.
func cutAt(b []byte, i, skip int) (before, after []byte) {
	if i < 0 {
		return b, nil
	}
	return b[:i], b[i+skip:]
}

// countWords counts the blank-separated words of b, without allocating.
func countWords(b []byte) int {
	n, in := 0, false
	for _, c := range b {
		blank := c == ' ' || c == '\t'
		if !blank && !in {
			n++
		}
		in = !blank
	}
	return n
}

// reDatum matches a value of a data row: a number (with sign, thousands
// separators, decimals, currency or percent), a date, a time or a
// boolean.
var reDatum = regexp.MustCompile(`^(?:[-+]?[$€£]?\d[\d,]*(?:\.\d+)?%?|\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?)?|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}:\d{2}(?::\d{2})?|true|false|null|yes|no)$`)

// isDatum reports whether f is a value (see reDatum), quoted or not.
func isDatum(f []byte) bool {
	return reDatum.Match(bytes.Trim(f, `"'`))
}

// A recordRun counts records written one field a line, as pretty-printed
// JSON objects ("{", then "key": value lines, then "}") and YAML list
// items ("- key: value", then "key: value" lines at the same indentation)
// are, in any file: records of two or more fields, of scalar values none of
// which is prose (four or more words), with the fields of the record
// before, that are not a configuration list (see
// recordProfile.isConfigList). Blank lines between records are allowed;
// any other line ends the run.
type recordRun struct {
	open     bool // a record is open
	json     bool // the open record is a JSON object, else a YAML item
	indent   int  // the indentation of a YAML item's keys
	start    int  // the line the open record starts on
	keys     []string
	values   [][]byte // the raw value of each of keys
	flat     bool     // the open record holds scalar fields alone
	prevKeys string   // the fields of the run's records
	count    int      // records in the run
	runStart int      // the line the run starts on
	fields   recordProfile
}

var (
	reJSONField = regexp.MustCompile(`^"((?:[^"\\]|\\.){1,64})"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)\s*,?$`)
	reYAMLField = regexp.MustCompile(`^( *)(- +)?([A-Za-z_][\w.-]{0,63}):(?:\s+(.*))?$`)
)

// line reads line n and returns the line the run starts on once it holds
// minDataRows records, else 0.
func (r *recordRun) line(n int, line []byte) int {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return 0
	}
	if u := bytes.TrimLeft(t, "[- "); len(u) > 0 && u[0] == '{' {
		// An object opens; one already open held it (a wrapper). Its
		// first field may share the line: {"id": 1,
		r.begin(n, true, 0, r.open)
		if u = bytes.TrimSpace(u[1:]); len(u) > 0 {
			return r.jsonField(u)
		}
		return 0
	}
	if r.open && r.json {
		if t[0] == '}' {
			c := r.end()
			if string(bytes.TrimLeft(t[1:], ", ")) == "{" {
				r.begin(n, true, 0, false)
			}
			return c
		}
		return r.jsonField(t)
	}
	var m [][]byte
	if bytes.IndexByte(t, ':') > 0 && (r.open || bytes.HasPrefix(t, []byte("- "))) {
		m = reYAMLField.FindSubmatch(line)
	}
	if m != nil && len(m[2]) > 0 {
		c := 0
		if r.open {
			c = r.end()
		}
		r.begin(n, false, len(m[1])+len(m[2]), false)
		r.addYAML(m[4], string(m[3]))
		return c
	}
	if r.open {
		switch in := len(line) - len(bytes.TrimLeft(line, " ")); {
		case in > r.indent:
			r.flat = false // a nested value
			return 0
		case in == r.indent && m != nil:
			r.addYAML(m[4], string(m[3]))
			return 0
		}
		c := r.end()
		r.count = 0
		return c
	}
	r.count = 0
	return 0
}

// jsonField reads t, a line of the open JSON object: a field, which may
// close the object ("total": 3}), or anything else, which makes the
// record not flat. It returns what end returns when the object closes.
func (r *recordRun) jsonField(t []byte) int {
	body := bytes.TrimRight(t, ", ]")
	closes := bytes.HasSuffix(body, []byte("}"))
	if closes {
		body = bytes.TrimSpace(body[:len(body)-1])
	}
	if m := reJSONField.FindSubmatch(body); m != nil {
		r.add(string(m[1]), m[2])
	} else {
		r.flat = false
	}
	if closes {
		return r.end()
	}
	return 0
}

// begin opens a record on line n; reset ends the run.
func (r *recordRun) begin(n int, json bool, indent int, reset bool) {
	if reset {
		r.count = 0
	}
	r.open, r.json, r.indent, r.start, r.keys, r.values, r.flat = true, json, indent, n, r.keys[:0], r.values[:0], true
}

// add records the field key with the raw value v.
func (r *recordRun) add(key string, v []byte) {
	if len(bytes.Fields(v)) >= 4 {
		r.flat = false // prose, as in a glossary
	}
	r.keys = append(r.keys, key)
	r.values = append(r.values, v)
}

// addYAML records the YAML field key with value v, which must be a scalar.
func (r *recordRun) addYAML(v []byte, key string) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || bytes.IndexByte([]byte("|>&*[{#"), v[0]) >= 0 {
		r.flat = false
	}
	r.add(key, v)
}

// end closes the open record and returns the line the run starts on when
// it now holds minDataRows records, else 0.
func (r *recordRun) end() int {
	r.open = false
	if !r.flat || len(r.keys) < 2 {
		r.count = 0
		return 0
	}
	sig := strings.Join(r.keys, "\x00")
	if r.count == 0 || sig != r.prevKeys {
		r.count, r.runStart, r.prevKeys = 0, r.start, sig
		r.fields = recordProfile{}
	}
	r.count++
	for i, k := range r.keys {
		r.fields.add(k, r.values[i])
	}
	r.fields.records++
	if r.count >= minDataRows && !r.fields.isConfigList() {
		return r.runStart
	}
	return 0
}

// A fencedBlock collects a fenced code block (``` or ~~~) of a markdown
// text and, when it closes, checks it for a JSON array of records as a
// .json file is checked (see recordArray), however it is laid out, and
// adds the records of its first array of two or more to those of the
// blocks before with the same fields: minDataRows of them split over
// blocks are a dump as well.
type fencedBlock struct {
	fence  []byte // the opening fence while a block is open
	start  int    // the line of the block's first content line
	body   bytes.Buffer
	arrays map[string]recordTotal // the records of the blocks so far, by their fields
}

// recordTotal counts records split over fenced blocks.
type recordTotal struct {
	records int
	start   int // the first line of the first block holding them
}

// open reports whether a block is open: the next line is in its body or
// closes it.
func (f *fencedBlock) open() bool { return f.fence != nil }

// line reads line n and returns the refusal of a block it closes.
func (f *fencedBlock) line(n int, line []byte) *Rejection {
	t := bytes.TrimLeft(line, " ")
	if f.fence == nil {
		if bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~")) {
			f.fence, f.start = append(f.fence[:0], t[:3]...), n+1
			f.body.Reset()
		}
		return nil
	}
	if !bytes.HasPrefix(t, f.fence) {
		f.body.Write(line)
		f.body.WriteByte('\n')
		return nil
	}
	f.fence = nil
	b := bytes.TrimSpace(f.body.Bytes())
	if len(b) == 0 || b[0] != '[' && b[0] != '{' {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	if recordArray(v) > 0 {
		return rawDataRejection("JSON records in a code block,", f.start)
	}
	if n, fields := flatArray(v, 2); n > 0 {
		if f.arrays == nil {
			f.arrays = map[string]recordTotal{}
		}
		a, ok := f.arrays[fields]
		if !ok {
			a.start = f.start
		}
		a.records += n
		f.arrays[fields] = a
		if a.records >= minDataRows {
			return rawDataRejection("JSON records in code blocks,", a.start)
		}
	}
	return nil
}

// A recordProfile is what a run of records holds in each field, by name:
// it tells a configuration list from a dump of a table (see
// isConfigList).
type recordProfile struct {
	records int
	fields  map[string]*fieldProfile
	unread  bool // a record was not a flat JSON object
}

// A fieldProfile is what one field of a run of records holds: how many of
// its values are measures (see isMeasure) and text (with blanks), and up
// to maxProfiledValues of its distinct values.
type fieldProfile struct {
	values, measures, texts int
	distinct                map[string]struct{}
}

// maxProfiledValues bounds the distinct values a fieldProfile keeps.
const maxProfiledValues = 256

// add records the value v, raw (quoted or not), of the field key.
func (p *recordProfile) add(key string, v []byte) {
	if p.fields == nil {
		p.fields = map[string]*fieldProfile{}
	}
	f := p.fields[key]
	if f == nil {
		f = &fieldProfile{distinct: map[string]struct{}{}}
		p.fields[key] = f
	}
	v = bytes.Trim(bytes.TrimSpace(v), `"'`)
	f.values++
	switch {
	case isMeasure(v):
		f.measures++
	case bytes.ContainsAny(v, " \t"):
		f.texts++
	}
	if len(f.distinct) < maxProfiledValues {
		f.distinct[string(v)] = struct{}{}
	}
}

// addJSON records the fields of line, a JSON object; a line that is not
// an object of scalars leaves the profile unread.
func (p *recordProfile) addJSON(line []byte) {
	var o map[string]any
	if json.Unmarshal(line, &o) != nil {
		p.unread = true
		return
	}
	p.addObject(o)
}

// addObject records the fields of o, a decoded JSON object; one that
// holds an object or an array leaves the profile unread.
func (p *recordProfile) addObject(o map[string]any) {
	p.records++
	for k, v := range o {
		switch v := v.(type) {
		case string:
			p.add(k, []byte(v))
		case float64:
			p.add(k, strconv.AppendFloat(nil, v, 'f', -1, 64))
		case bool:
			p.add(k, strconv.AppendBool(nil, v))
		case nil:
			p.add(k, []byte("null"))
		default:
			p.unread = true
		}
	}
}

// objectsProfile profiles xs, objects of scalars (see sameFlatObjects).
func objectsProfile(xs []any) *recordProfile {
	var p recordProfile
	for _, x := range xs {
		p.addObject(x.(map[string]any))
	}
	return &p
}

// maxVariedNames bounds the fields of a configuration list whose values
// differ from record to record: a name, and what it maps to (a redirect's
// from and to).
const maxVariedNames = 2

// isConfigList reports whether the records read so far are a
// configuration list rather than a dump of a table: each field holds few
// distinct values (see maxEnumValues: booleans, owners, ports, methods),
// or names that differ from record to record (identifiers, hosts, paths,
// addresses; one such field at least, as a list names what it
// configures, and at most maxVariedNames), never numbers, dates or times
// that differ (ids, amounts, time stamps: measurements) nor text of
// several words (names of people, notes). 120 feature flags {name,
// enabled, owner} are a list; 120 orders {id, amount, created_at} and 120
// contacts {name: "Alice Smith", email, city} are a dump.
func (p *recordProfile) isConfigList() bool {
	if p.unread || p.records == 0 {
		return false
	}
	varied := 0
	for _, f := range p.fields {
		if len(f.distinct) <= maxEnumValues(p.records) {
			continue
		}
		if 2*f.measures > f.values || 2*f.texts > f.values {
			return false
		}
		if varied++; varied > maxVariedNames {
			return false
		}
	}
	return varied > 0
}

// maxEnumValues is how many distinct values a field of n records may hold
// and still be a setting chosen from a few (true/false, a team, a port).
func maxEnumValues(n int) int {
	return max(12, n/8)
}

// reTimestamp matches the start of a date and time, with any zone.
var reTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}`)

// isMeasure reports values that measure or count: numbers, dates, times
// and time stamps (see reDatum), not booleans or null.
func isMeasure(v []byte) bool {
	switch string(v) {
	case "true", "false", "null", "yes", "no":
		return false
	}
	return reDatum.Match(v) || reTimestamp.Match(v)
}
