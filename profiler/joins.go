package profiler

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// joinsHeader is the header row of JoinSketchesCSV.
var joinsHeader = []string{"column", "type", "unique", "distinct", "exact", "hashes"}

// JoinSketchesCSV renders what Relate needs of the profile as CSV, so that
// a caller can keep it next to the markdown and relate sources later
// without reading them again: one row per column that has a join sketch,
// with the column's name, type, uniqueness, distinct count, whether the
// sketch is exact, and its hashes as 16-digit hex separated by spaces.
// It holds hashes and counts only, no values.
//
// When the text would exceed maxBytes (0 means no limit), every sketch is
// cut to its smallest hashes, halving k until the text fits: a bottom-k
// sketch cut to k' is the bottom-k' sketch of the same set, so Relate
// still works, with a wider error.
func (p *TableProfile) JoinSketchesCSV(maxBytes int) []byte {
	for k := joinK; ; k /= 2 {
		out := p.joinSketchesCSV(k)
		if maxBytes <= 0 || len(out) <= maxBytes || k <= 8 {
			return out
		}
	}
}

func (p *TableProfile) joinSketchesCSV(k int) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(joinsHeader)
	var hx strings.Builder
	for _, c := range p.Columns {
		if c.Join == nil {
			continue
		}
		hs, exact := c.Join.Hashes, c.Join.Exact
		if len(hs) > k {
			hs, exact = hs[:k], false
		}
		hx.Reset()
		for i, h := range hs {
			if i > 0 {
				hx.WriteByte(' ')
			}
			fmt.Fprintf(&hx, "%016x", h)
		}
		_ = w.Write([]string{c.Name, c.Type, strconv.FormatBool(c.Unique), strconv.FormatInt(c.Distinct, 10),
			strconv.FormatBool(exact), hx.String()})
	}
	w.Flush()
	return buf.Bytes()
}

// ParseJoinSketchesCSV reads the output of JoinSketchesCSV back as a
// profile named name that holds only what Relate uses.
func ParseJoinSketchesCSV(name string, data []byte) (*TableProfile, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(joinsHeader)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("profiler: join sketches of %s: %w", name, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], joinsHeader) {
		return nil, fmt.Errorf("profiler: join sketches of %s: the header is not %s", name, strings.Join(joinsHeader, ","))
	}
	tp := &TableProfile{Name: name}
	for i, rec := range recs[1:] {
		bad := func(what string) error {
			return fmt.Errorf("profiler: join sketches of %s, row %d: %s", name, i+2, what)
		}
		unique, err1 := strconv.ParseBool(rec[2])
		distinct, err2 := strconv.ParseInt(rec[3], 10, 64)
		exact, err3 := strconv.ParseBool(rec[4])
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, bad("unique, distinct or exact is not valid")
		}
		js := &JoinSketch{Exact: exact, Hashes: []uint64{}}
		for _, f := range strings.Fields(rec[5]) {
			h, err := strconv.ParseUint(f, 16, 64)
			if err != nil {
				return nil, bad(fmt.Sprintf("hash %q is not hex", f))
			}
			js.Hashes = append(js.Hashes, h)
		}
		if !slices.IsSorted(js.Hashes) {
			return nil, bad("hashes are not sorted")
		}
		tp.Columns = append(tp.Columns, &ColumnProfile{Name: rec[0], Type: rec[1], Unique: unique,
			Distinct: distinct, Join: js})
	}
	return tp, nil
}
