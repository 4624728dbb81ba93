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
// phrases (see hasWordyField); of lines each holding one JSON object; or
// of records written one field a line (see recordRun). A blank line ends a
// run, and so do a markdown list item (the lines of a profile, one a
// column, hold as many semicolons each) and a sentence's end (prose,
// however regular), unless the line is a row of values with a bullet or a
// full stop added (see isDataRow).
type rowScanner struct {
	table, objects run
	records        recordRun
	delim          byte
	fewest, most   int // delimiters on the rows of the table run
}

// maxRaggedSpread returns how many more delimiters than the fewest, fewest,
// a row of a table may hold: rows of a dump differ by an empty trailing
// field or a comma inside an unquoted value.
func maxRaggedSpread(fewest int) int {
	return max(2, fewest/2)
}

// line reads line n and returns what kind of records, once minDataRows of
// them are in a run with it, and the line the run starts on; "" for none.
func (s *rowScanner) line(n int, line []byte) (what string, start int) {
	if start := s.records.line(n, line); start > 0 {
		return "records of the same fields", start
	}
	d, k := delimiters(line)
	if k == 0 && isDataRow(line, ' ') {
		// Columns aligned with blanks: 2024-01-03   45.2   12
		d, k = ' ', countWords(line)
	}
	if (isListItem(line) || endsSentence(line)) && !isDataRow(line, d) {
		k = 0
	}
	uniform := k == s.fewest && k == s.most
	if k == 0 || d != s.delim || !uniform && (max(s.most, k)-min(s.fewest, k) > maxRaggedSpread(min(s.fewest, k)) || hasWordyField(line, d)) {
		s.table, s.fewest, s.most = run{}, k, k
	}
	s.delim, s.fewest, s.most = d, min(s.fewest, k), max(s.most, k)
	if k > 0 && s.table.add(n) >= minDataRows {
		return tableRows, s.table.start
	}
	if t := bytes.TrimSpace(line); len(t) > 1 && t[0] == '{' && (t[len(t)-1] == '}' || bytes.HasSuffix(t, []byte("},"))) {
		if s.objects.add(n) >= minDataRows {
			return "JSON records, one a line,", s.objects.start
		}
	} else {
		s.objects = run{}
	}
	return "", 0
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
// values alone, all with the same fields, as a dump of a table has; 0 for
// none. Configuration lists hold nested values or differing fields.
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
		if len(v) >= least && sameFlatObjects(v) {
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

// delimiters returns the field delimiter of line, the one of ",", tab,
// ";" and "|" it holds most often outside double quotes, and how many
// times; 0 for a line holding fewer than two of any.
func delimiters(line []byte) (byte, int) {
	var counts [4]int
	const set = ",\t;|"
	quoted := false
	for _, c := range line {
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted:
			if i := strings.IndexByte(set, c); i >= 0 {
				counts[i]++
			}
		}
	}
	best := 0
	for i := range counts {
		if counts[i] > counts[best] {
			best = i
		}
	}
	if counts[best] < 2 {
		return 0, 0
	}
	return set[best], counts[best]
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
// before. Blank lines between records are allowed; any other line ends the
// run.
type recordRun struct {
	open     bool // a record is open
	json     bool // the open record is a JSON object, else a YAML item
	indent   int  // the indentation of a YAML item's keys
	start    int  // the line the open record starts on
	keys     []string
	flat     bool   // the open record holds scalar fields alone
	prevKeys string // the fields of the run's records
	count    int    // records in the run
	runStart int    // the line the run starts on
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
	r.open, r.json, r.indent, r.start, r.keys, r.flat = true, json, indent, n, r.keys[:0], true
}

// add records the field key with the raw value v.
func (r *recordRun) add(key string, v []byte) {
	if len(bytes.Fields(v)) >= 4 {
		r.flat = false // prose, as in a glossary
	}
	r.keys = append(r.keys, key)
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
	}
	r.count++
	if r.count >= minDataRows {
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
