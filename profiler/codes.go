package profiler

import (
	"strconv"
	"strings"
)

// codeWords are column-name words that make an integer column a code
// (a name for something) rather than a measure.
var codeWords = map[string]bool{
	"id": true, "key": true, "code": true, "zip": true, "zipcode": true, "zip5": true,
	"postal": true, "postcode": true, "fips": true, "precinct": true, "precincts": true,
	"district": true, "districts": true, "ward": true, "tract": true, "bbl": true, "bin": true,
	"codes": true, "zips": true, "uuid": true, "sku": true, "isbn": true, "ean": true, "upc": true,
}

// isCodeName reports whether a column's name says its integers are
// codes: ZIP, Postal Code, Police Precinct, Council District, Row ID,
// customer_id, UniqueKey.
func isCodeName(name string) bool {
	for _, w := range nameTokens(name) {
		if codeWords[w] {
			return true
		}
	}
	return false
}

// textPlaceholders are values that stand for "unknown" in text columns.
var textPlaceholders = map[string]bool{
	"unknown": true, "unspecified": true, "not specified": true, "tbd": true, "tba": true,
	"missing": true, "-": true, "--": true, "---": true, "xxx": true, "xx": true,
	"not available": true, "undefined": true, "(blank)": true, "blank": true,
}

// numPlaceholder reports whether s is written like a placeholder number:
// three or more nines or eights (999, 99999, 88888, 99.99), or a small
// negative run of nines or -1.
func numPlaceholder(s string) bool {
	neg := strings.HasPrefix(s, "-")
	d := strings.TrimPrefix(s, "-")
	if neg && (d == "1" || d == "9" || d == "99") {
		return true
	}
	digits := 0
	var first byte
	for i := 0; i < len(d); i++ {
		c := d[i]
		switch {
		case c == '.' || c == ',':
			continue
		case c < '0' || c > '9':
			return false
		case first == 0:
			first = c
		case c != first:
			return false
		}
		digits++
	}
	return digits >= 3 && (first == '9' || first == '8')
}

// placeholders returns the exactly counted values of cp that look like
// stand-ins for "unknown", most frequent first (ties by value), from the
// value counts sc in any order: for numbers, a placeholder-shaped value at
// the column's minimum or maximum seen at least twice (a negative one only
// if no other value is negative); for codes, a placeholder-shaped value
// seen at least twice; for text, words such as Unspecified or Unknown.
func placeholders(cp *ColumnProfile, sc []ValueCount) []ValueCount {
	var out []ValueCount
	for _, v := range sc {
		if v.Approx {
			continue
		}
		t := trimSpace(v.Value)
		switch cp.Type {
		case TypeInteger, TypeDecimal:
			if v.Count < 2 || !numPlaceholder(t) {
				continue
			}
			n := cp.Numeric
			var f float64
			var err error
			switch cp.Format {
			case formatDecComma:
				f, err = strconv.ParseFloat(strings.Replace(strings.ReplaceAll(t, ".", ""), ",", ".", 1), 64)
			case formatGrouped:
				f, err = strconv.ParseFloat(strings.ReplaceAll(t, ",", ""), 64)
			default:
				f, err = strconv.ParseFloat(t, 64)
			}
			if err != nil {
				continue
			}
			if f == n.Max && f > 0 || f == n.Min && f < 0 && n.Negatives == v.Count {
				out = append(out, v)
			}
		case TypeCode:
			if v.Count >= 2 && numPlaceholder(t) {
				out = append(out, v)
			}
		case TypeCategorical, TypeText, TypeIdentifier:
			if textPlaceholders[strings.ToLower(t)] {
				out = append(out, v)
			}
		}
	}
	sortCounts(out)
	return out
}

// formatDecComma is the Format of a decimal column written with decimal
// commas (3,5).
const formatDecComma = "with decimal comma"

// formatGrouped is the Format of a decimal column written with ','
// between groups of thousands (1,234.50).
const formatGrouped = "with thousands separators"
