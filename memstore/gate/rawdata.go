package gate

import (
	"bytes"
	"encoding/csv"
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
// minDataRows records in a row, as a run of lines with the same number of
// one delimiter (",", tab, ";" or "|", outside double quotes) or of lines
// each holding one JSON object. A blank line ends a run, and so do a
// markdown list item (the lines of a profile, one a column, hold as many
// semicolons each) and a sentence's end (prose, however regular). The join
// sketches profile_source keeps beside a profile (isJoinSketches) hold
// hashes and counts, not data.
func findRawData(content []byte) *Rejection {
	var table, objects run
	var delim byte
	fields := -1
	lineNo := 0
	for off := 0; off < len(content); {
		var line []byte
		line, off = nextLine(content, off)
		lineNo++
		d, n := delimiters(line)
		if isListItem(line) || endsSentence(line) {
			n = 0
		}
		if n == 0 || d != delim || n != fields {
			table = run{}
		}
		delim, fields = d, n
		if n > 0 && table.add(lineNo) >= minDataRows {
			if isJoinSketches(content) {
				return nil
			}
			return rawDataRejection("rows of a table", table.start)
		}
		if t := bytes.TrimSpace(line); len(t) > 1 && t[0] == '{' && (t[len(t)-1] == '}' || bytes.HasSuffix(t, []byte("},"))) {
			if objects.add(lineNo) >= minDataRows {
				return rawDataRejection("JSON records, one a line,", objects.start)
			}
		} else {
			objects = run{}
		}
	}
	return nil
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
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if n := recordArray(v[k]); n > 0 {
				return n
			}
		}
	case []any:
		if len(v) >= minDataRows && sameFlatObjects(v) {
			return len(v)
		}
		for _, x := range v {
			if n := recordArray(x); n > 0 {
				return n
			}
		}
	}
	return 0
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
