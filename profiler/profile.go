package profiler

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Logical column types reported in ColumnProfile.Type.
const (
	TypeInteger  = "integer"
	TypeDecimal  = "decimal"
	TypeBoolean  = "boolean"
	TypeDate     = "date"
	TypeDateTime = "datetime"
	TypeTime     = "time" // of day, without a date
	// TypeCode is an integer that names rather than measures: a ZIP or
	// postal code, a precinct, an id (recognised by the column's name or
	// leading zeros). It has a range and a catalog, no mean.
	TypeCode        = "code"
	TypeIdentifier  = "identifier"
	TypeCategorical = "categorical"
	TypeText        = "text"
	TypeEmpty       = "empty"
)

// Options tunes Profile. A nil *Options means the defaults.
type Options struct {
	// Name names the table in the rendering; default is the source's name.
	Name string
	// ExactDistinct is the number of distinct values per column counted
	// exactly before switching to sketches (default 10,000). A column
	// switches sooner when the exact counts of all columns together
	// would outgrow 256 MiB: a table of hundreds of columns of distinct
	// values.
	ExactDistinct int
	// Workers is the number of goroutines computing column statistics
	// (default GOMAXPROCS).
	Workers int
	// Progress, if set, is called after each batch with the bytes read so
	// far and the total (0 when unknown).
	Progress func(bytesRead, totalBytes int64)
	// Secrets, if set, reports whether a value holds a credential, beside
	// the profiler's own detection: selmem passes its write gate's
	// scanner, so that a profile shows nothing a write would refuse. It
	// sees only values a profile could show (catalog values, examples,
	// sample rows), and one it flags is shown as <secret>.
	Secrets func(value string) bool
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.ExactDistinct <= 0 {
		r.ExactDistinct = 10000
	}
	if r.Workers <= 0 {
		r.Workers = runtime.GOMAXPROCS(0)
	}
	return r
}

// TableProfile is the statistical profile of one source. It holds no raw
// data beyond the short, clipped sample rows and category values, and
// none of personal data or secrets: sensitive columns (ColumnProfile.
// Sensitive) are described by shape only, and values holding such data
// elsewhere are replaced by masks such as <email> or <card>.
type TableProfile struct {
	Name          string           `json:"name"`
	Format        string           `json:"format,omitempty"`
	Encoding      string           `json:"encoding,omitempty"`
	Rows          int64            `json:"rows"`
	Columns       []*ColumnProfile `json:"columns"`
	CandidateKeys []string         `json:"candidate_keys"`
	// CompositeKeys are pairs of columns that together identify every
	// row while neither does alone.
	CompositeKeys [][]string `json:"composite_keys,omitempty"`
	// CompositeKeysApprox: beyond 524,288 rows a pair was checked only
	// against the first 524,288 distinct pairs.
	CompositeKeysApprox bool       `json:"composite_keys_approx,omitempty"`
	KeysApprox          bool       `json:"keys_approx,omitempty"`
	DuplicateRows       int64      `json:"duplicate_rows"`
	DuplicatesLower     bool       `json:"duplicates_lower_bound,omitempty"`
	Samples             [][]string `json:"samples"`
	Warnings            []string   `json:"warnings,omitempty"`
	Fingerprint         string     `json:"fingerprint"`
}

// ColumnProfile is the profile of one column.
type ColumnProfile struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Format string `json:"format,omitempty"`
	// Unit is the sign every number of the column is written with: % or
	// a currency ($, €, £, ¥, ₹). The figures are of the numbers alone.
	Unit          string     `json:"unit,omitempty"`
	Count         int64      `json:"count"`
	Nulls         int64      `json:"nulls"`
	Empty         int64      `json:"empty"`
	NullTokens    []string   `json:"null_tokens,omitempty"`
	Distinct      int64      `json:"distinct"`
	DistinctExact bool       `json:"distinct_exact"`
	Unique        bool       `json:"unique"`
	Numeric       *NumStats  `json:"numeric,omitempty"`
	Dates         *DateStats `json:"dates,omitempty"`
	// Range is the smallest and largest value of a code column.
	Range      []string     `json:"range,omitempty"`
	Lengths    *LengthStats `json:"lengths,omitempty"`
	Patterns   []string     `json:"patterns,omitempty"`
	Top        []ValueCount `json:"top,omitempty"`
	Rare       []ValueCount `json:"rare,omitempty"`
	OtherCount int64        `json:"other_count,omitempty"`
	// Placeholders are values that stand for "unknown" (99999, 88888,
	// -1, Unspecified) with their counts; they are included in every
	// other figure.
	Placeholders []ValueCount `json:"placeholders,omitempty"`
	// Padded counts the values (not missing) written with surrounding
	// whitespace, which catalogs keep as written.
	Padded   int64       `json:"padded,omitempty"`
	Warnings []string    `json:"warnings,omitempty"`
	Join     *JoinSketch `json:"join,omitempty"`
	// Sensitive is set when the column holds personal data or secrets;
	// the profile then holds no value of it (see Sensitive).
	Sensitive *Sensitive `json:"sensitive,omitempty"`
}

// NumStats summarises a numeric column. Quantiles are exact while the
// column has at most Options.ExactDistinct distinct values and come from
// a KLL sketch (rank error about 1%) beyond.
type NumStats struct {
	Min            float64    `json:"min"`
	Max            float64    `json:"max"`
	Mean           float64    `json:"mean"`
	Std            float64    `json:"std"`
	Zeros          int64      `json:"zeros"`
	Negatives      int64      `json:"negatives"`
	Quantiles      []Quantile `json:"quantiles"`
	QuantilesExact bool       `json:"quantiles_exact"`
}

// Quantile is the value V at rank Q (0..1).
type Quantile struct {
	Q float64 `json:"q"`
	V float64 `json:"v"`
}

// DateStats summarises a date/time column (values in UTC): dates as
// YYYY-MM-DD, timestamps as YYYY-MM-DD HH:mm:ss, times of day in the
// column's own layout (HH:mm or HH:mm:ss).
type DateStats struct {
	Min       string   `json:"min"`
	Max       string   `json:"max"`
	Quantiles []string `json:"quantiles"` // at QuantileRanks
}

// LengthStats gives string lengths in characters.
type LengthStats struct {
	Min  int     `json:"min"`
	Max  int     `json:"max"`
	Mean float64 `json:"mean"`
}

// ValueCount is a value and how often it occurs. Value is the exact
// spelling, surrounding spaces included; a value longer than 200 bytes
// keeps its start and end joined by "…" (Shortened). Approx marks a count
// from the heavy-hitter sketch: the true count lies in [Min, Count].
type ValueCount struct {
	Value     string `json:"value"`
	Count     int64  `json:"count"`
	Approx    bool   `json:"approx,omitempty"`
	Min       int64  `json:"min,omitempty"`
	Shortened bool   `json:"shortened,omitempty"`

	values int // distinct values merged into this one by a mask (0: one)
}

// JoinSketch is a bottom-k sample of a column's value hashes, used by
// Relate. Exact means it holds every distinct value's hash.
type JoinSketch struct {
	Exact  bool     `json:"exact"`
	Hashes []uint64 `json:"hashes"`
}

// MaxColumns is how many columns a profile holds. A source with more
// (a table hundreds of thousands of columns wide, or JSON records whose
// keys all differ) is refused: each column costs its statistics, and
// reading such JSON costs columns times rows.
const MaxColumns = 1000

// errTooManyColumns refuses a source with more than MaxColumns columns.
var errTooManyColumns = fmt.Errorf("profiler: the source has more than %d columns; profile a narrower view of it (a query selecting the columns, or records with fewer distinct keys)", MaxColumns)

// maxPartRows is the most rows Profile hands its workers at once.
const maxPartRows = 1 << 16

// QuantileRanks are the ranks reported in NumStats.Quantiles and DateStats.
var QuantileRanks = []float64{0.05, 0.25, 0.5, 0.75, 0.95}

// Profile reads src in one streaming pass and returns its profile.
// Column statistics are computed in parallel across Options.Workers
// goroutines; memory is bounded by the batch size, the sketch sizes and
// 256 MiB of exact counts, not by the input size.
//
// A source the readers cannot make sense of is an error, also when a
// reader panics on it (a malformed Parquet or Arrow file): the readers
// run in the calling goroutine, and the workers report their panics.
func Profile(ctx context.Context, src Source, opts *Options) (_ *TableProfile, err error) {
	o := opts.withDefaults()
	p := &profileRun{opts: o, byName: map[string]int{}, rows: newRowAcc(), mask: masker{secrets: o.Secrets}}
	p.rows.mask = p.mask
	var pending *batchJob
	defer func() {
		if r := recover(); r != nil {
			_ = p.wait(pending)
			err = malformed(r)
		}
	}()
	rr, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer rr.Release()

	for rr.Next() {
		rec := rr.RecordBatch()
		if p.columnsWith(rec.Schema()) > MaxColumns {
			_ = p.wait(pending)
			return nil, errTooManyColumns
		}
		// A batch is profiled in parts of at most maxPartRows rows, so
		// that a cancelled profile stops within one part: a columnar
		// file of a few hundred bytes can claim a batch of 2^40 rows
		// of an all-null column.
		for off, n := int64(0), rec.NumRows(); off == 0 || off < n; off += maxPartRows {
			if err := ctx.Err(); err != nil {
				_ = p.wait(pending)
				return nil, err
			}
			part := rec
			if n > maxPartRows {
				part = rec.NewSlice(off, min(off+maxPartRows, n))
			} else {
				part.Retain()
			}
			if err := p.wait(pending); err != nil {
				part.Release()
				pending = nil
				return nil, err
			}
			pending = p.start(part)
		}
		if o.Progress != nil {
			read, total := rr.Progress()
			o.Progress(read, total)
		}
	}
	err, pending = p.wait(pending), nil
	if err != nil {
		return nil, err
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	if sc, ok := rr.(interface{ Schema() *arrow.Schema }); ok && len(p.cols) == 0 {
		for _, f := range sc.Schema().Fields() {
			p.byName[f.Name] = len(p.cols)
			p.cols = append(p.cols, p.newCol(f.Name))
		}
	}
	info := rr.Info()
	tp := p.finish()
	tp.Name = o.Name
	if tp.Name == "" {
		tp.Name = info.Name
	}
	tp.Format = info.Format
	tp.Encoding = info.Encoding
	tp.Warnings = append(info.Warnings, tp.Warnings...)
	if len(tp.Columns) == 0 {
		return nil, errors.New("profiler: the source has no columns (empty input?)")
	}
	return tp, nil
}

type profileRun struct {
	opts   Options
	mask   masker
	cols   []*colAcc
	byName map[string]int
	rows   *rowAcc
	nrows  int64
}

// newCol returns the accumulator of a new column named name.
func (p *profileRun) newCol(name string) *colAcc {
	c := newColAcc(name, p.opts.ExactDistinct)
	c.mask = p.mask
	return c
}

// columnsWith returns how many columns the profile has once schema's are
// added to those seen so far.
func (p *profileRun) columnsWith(schema *arrow.Schema) int {
	n := len(p.cols)
	for _, f := range schema.Fields() {
		if _, ok := p.byName[f.Name]; !ok {
			n++
		}
	}
	return n
}

type batchJob struct {
	wg  sync.WaitGroup
	rec arrow.RecordBatch

	mu  sync.Mutex
	err error // the first panic of a worker, as an error
}

// wait waits for b's workers, releases its batch and returns the first
// panic of a worker as an error.
func (p *profileRun) wait(b *batchJob) error {
	if b == nil {
		return nil
	}
	b.wg.Wait()
	b.rec.Release()
	return b.err
}

// recoverWorker, deferred by a worker, records its panic: a malformed
// columnar file can give arrays whose buffers disagree with their
// lengths, and a panic in a goroutine of its own would end the process.
func (b *batchJob) recoverWorker() {
	if r := recover(); r != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.err == nil {
			b.err = malformed(r)
		}
	}
}

// malformed is the error of a panic over a source's data.
func malformed(panicked any) error {
	return fmt.Errorf("profiler: the source is malformed: %v", panicked)
}

// start assigns the batch's columns to accumulators and launches the
// workers; accumulators see batches strictly in order, so results are
// deterministic whatever the scheduling.
func (p *profileRun) start(rec arrow.RecordBatch) *batchJob {
	n := rec.NumRows()
	schema := rec.Schema()
	present := make([]arrow.Array, len(p.cols))
	for i, f := range schema.Fields() {
		ci, ok := p.byName[f.Name]
		if !ok {
			ci = len(p.cols)
			p.byName[f.Name] = ci
			acc := p.newCol(f.Name)
			acc.addMissing(p.nrows)
			p.cols = append(p.cols, acc)
			present = append(present, nil)
		}
		present[ci] = rec.Column(i)
	}
	p.nrows += n
	shareExactMemory(p.cols)
	b := &batchJob{rec: rec}
	var next atomic.Int64
	jobs := len(p.cols) + 1
	workers := min(p.opts.Workers, jobs)
	b.wg.Add(workers)
	for range workers {
		go func() {
			defer b.wg.Done()
			defer b.recoverWorker()
			for {
				j := int(next.Add(1)) - 1
				if j >= jobs {
					return
				}
				if j == len(p.cols) {
					p.rows.addBatch(present, int(n))
					continue
				}
				if present[j] == nil {
					p.cols[j].addMissing(n)
				} else {
					addArray(p.cols[j], present[j])
				}
			}
		}()
	}
	return b
}

// addArray adds a batch's values of a column, counting its nulls
// eight at a time where it can: a column of few values among many rows
// costs about its values.
func addArray(c *colAcc, arr arrow.Array) {
	if blank(arr) {
		c.addMissing(int64(arr.Len()))
		return
	}
	var nulls int
	switch a := arr.(type) {
	case *array.String:
		nulls = eachValue(a, func(i int) { c.add(a.Value(i)) })
	case *array.LargeString:
		nulls = eachValue(a, func(i int) { c.add(a.Value(i)) })
	default:
		nulls = eachValue(a, func(i int) { c.add(valueString(a, i)) })
	}
	c.addMissing(int64(nulls))
}

// eachValue calls f with the index of each element of a that is not
// null, in order, and returns how many are. An element is null as
// a.IsNull tells, by the validity bits (an array without them, of type
// null too, has none null).
func eachValue(a arrow.Array, f func(i int)) (nulls int) {
	n := a.Len()
	bits := a.NullBitmapBytes()
	if len(bits) == 0 {
		for i := range n {
			f(i)
		}
		return 0
	}
	off := a.Data().Offset()
	for i := 0; i < n; i++ {
		j := off + i
		if j&7 == 0 && i+8 <= n && bits[j>>3] == 0 {
			nulls += 8
			i += 7
			continue
		}
		if bits[j>>3]&(1<<(j&7)) != 0 {
			f(i)
		} else {
			nulls++
		}
	}
	return nulls
}

// blank reports a column with no value in its batch: absent, or null
// in every row (as a.IsNull tells).
func blank(a arrow.Array) bool {
	if a == nil {
		return true
	}
	bits := a.NullBitmapBytes()
	return len(bits) > 0 && bitutil.CountSetBits(bits, a.Data().Offset(), a.Len()) == 0
}

// valueString renders a typed Arrow value the way the text inference
// understands it.
func valueString(a arrow.Array, i int) string {
	switch v := a.(type) {
	case *array.Timestamp:
		unit := v.DataType().(*arrow.TimestampType).Unit
		return v.Value(i).ToTime(unit).UTC().Format(time.RFC3339Nano)
	case *array.Date32:
		return v.Value(i).ToTime().Format("2006-01-02")
	case *array.Date64:
		return v.Value(i).ToTime().Format("2006-01-02")
	case *array.Float64:
		return strconv.FormatFloat(v.Value(i), 'g', -1, 64)
	case *array.Float32:
		return strconv.FormatFloat(float64(v.Value(i)), 'g', -1, 32)
	}
	return a.ValueStr(i)
}

func (p *profileRun) finish() *TableProfile {
	tp := &TableProfile{Rows: p.nrows}
	names := make([]string, len(p.cols))
	// Columns finish independently (sorting their counts is most of it),
	// as many at a time as there are processors.
	finished := make([]*ColumnProfile, len(p.cols))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	dot := pointDecimals(p.cols)
	for i, c := range p.cols {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			finished[i] = c.finish(dot)
		})
	}
	wg.Wait()
	for i, c := range p.cols {
		cp := finished[i]
		cls := findSensitive(cp.Name)
		if cls == ClassNone && p.mask.secrets != nil && p.mask.secrets(cp.Name) {
			cls = ClassSecret
		}
		if cls != ClassNone && cls != ClassName {
			// a header that is data (a JSON object keyed by emails)
			cp.Name = "column_" + strconv.Itoa(i+1)
			tp.Warnings = append(tp.Warnings, fmt.Sprintf("the name of %s looked like %s data and was replaced", cp.Name, cls))
		}
		tp.Columns = append(tp.Columns, cp)
		names[i] = c.name
		if cp.Unique && cp.Type != TypeDecimal && cp.Type != TypeText {
			tp.CandidateKeys = append(tp.CandidateKeys, cp.Name)
			if !cp.DistinctExact {
				tp.KeysApprox = true
			}
		}
	}
	r := p.rows
	pairs, approx := r.pairs.keys(len(p.cols))
	tp.CompositeKeys = compositeKeys(tp, pairs)
	tp.CompositeKeysApprox = approx && len(tp.CompositeKeys) > 0
	tp.DuplicateRows = r.dups
	tp.DuplicatesLower = r.capped
	tp.Samples = r.pickSamples(len(p.cols))
	for _, row := range tp.Samples {
		for ci, v := range row {
			if ci < len(tp.Columns) && tp.Columns[ci].Sensitive != nil && !missing(v) {
				row[ci] = tp.Columns[ci].Sensitive.class.Mask()
			}
		}
	}

	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
	}
	h.Write(r.fp[:])
	fmt.Fprintf(h, "%d", p.nrows)
	tp.Fingerprint = "sha256:" + hex.EncodeToString(h.Sum(nil))[:32]
	if len(p.cols) > 0 && p.nrows == 0 {
		tp.Warnings = append(tp.Warnings, "no data rows (header only)")
	}
	return tp
}

// pointDecimals reports whether a file's numbers put '.' before their
// fraction: some column of numbers writes 3.5 or ',' between thousands
// (1,234,567), and none writes a comma only a decimal one explains
// (3,5 or 1.234,56). A file keeps to one convention, so then a column
// of values such as 1,500 alone has thousands too.
func pointDecimals(cols []*colAcc) bool {
	dot := false
	for _, c := range cols {
		nn := c.rows - c.nulls - c.empty
		n := c.kinds[kInt] + c.kinds[kDec] + c.kinds[kDecC] + c.kinds[kDecG]
		if nn == 0 || float64(n) < 0.99*float64(nn) {
			continue
		}
		if c.kinds[kDecC] > c.decC3 {
			return false
		}
		dot = dot || c.kinds[kDec] > 0 || c.kinds[kDecG] > 0
	}
	return dot
}

// finish returns the column's profile. pointDecimals tells that the file
// writes '.' before fractions (see pointDecimals).
func (c *colAcc) finish(pointDecimals bool) *ColumnProfile {
	cp := &ColumnProfile{Name: c.name, Nulls: c.nulls, Empty: c.empty}
	nn := c.rows - c.nulls - c.empty
	cp.Count = nn
	for t := range c.nullToks {
		cp.NullTokens = append(cp.NullTokens, t)
	}
	sort.Strings(cp.NullTokens)
	if c.overflow {
		cp.Distinct = int64(math.Round(c.hll.estimate()))
		cp.Distinct = max(cp.Distinct, int64(len(c.keys)))
		cp.Distinct = min(cp.Distinct, nn)
	} else {
		cp.Distinct = int64(len(c.keys))
		cp.DistinctExact = true
	}
	// uniqueness
	if nn > 0 && c.nulls == 0 && c.empty == 0 {
		if !c.overflow {
			cp.Unique = cp.Distinct == nn
		} else if !c.keyDead {
			if c.keyCap {
				cp.Unique = float64(cp.Distinct) >= 0.97*float64(nn)
			} else {
				cp.Unique = true
				cp.DistinctExact = true
				cp.Distinct = nn
			}
		}
	}
	cp.Padded = c.padded
	if nn == 0 {
		cp.Type = TypeEmpty
		return cp
	}
	share := func(k ...kind) float64 {
		var s int64
		for _, x := range k {
			s += c.kinds[x]
		}
		return float64(s) / float64(nn)
	}
	const conform = 0.99
	cls, clsShare := c.pii.decide(nn, share(kInt, kDec, kDecC, kDecG, kBool) >= conform)
	code := isCodeName(c.name)
	var main []kind
	dateL := int8(-1)
	readGrouped := false // numbers read with ',' between thousands
	switch {
	case share(kInt) >= conform && (c.lead0 == 0 || code):
		cp.Type, main = TypeInteger, []kind{kInt}
		if code || c.lead0 > 0 {
			cp.Type = TypeCode
		}
	case share(kInt, kDec) >= conform && c.lead0 == 0:
		cp.Type, main = TypeDecimal, []kind{kInt, kDec}
	case (c.kinds[kDecG] > 0 || pointDecimals && c.kinds[kDecC] > 0) && c.decC3 == c.kinds[kDecC] &&
		share(kInt, kDec, kDecG, kDecC) >= conform && c.lead0 == 0:
		// 1,234,567 or 1,234.5 says ',' separates thousands; then so it
		// does in 1,234. So does a '.' before fractions in the file.
		cp.Type, cp.Format, main = TypeDecimal, formatGrouped, []kind{kInt, kDec, kDecG, kDecC}
		if c.kinds[kDec] == 0 && c.decGFrac == 0 {
			cp.Type = TypeInteger
		}
		readGrouped = true
	case share(kInt, kDecC) >= conform && c.kinds[kDecC] > 0 && c.lead0 == 0:
		cp.Type, cp.Format, main = TypeDecimal, formatDecComma, []kind{kInt, kDecC}
		if c.decC3 == c.kinds[kDecC] {
			cp.Warnings = append(cp.Warnings, "every value has three digits after the comma: ',' may be a thousands separator")
		}
	case share(kBool) >= conform:
		cp.Type, main = TypeBoolean, []kind{kBool}
	case share(kDate) >= conform:
		l, n := c.dateLayoutChoice()
		dateL = l
		switch {
		case slices.Contains(famTime, l):
			cp.Type = TypeTime
		case dateLayouts[l].hasTime:
			cp.Type = TypeDateTime
		default:
			cp.Type = TypeDate
		}
		cp.Format = dateLayouts[l].display
		main = []kind{kDate}
		if tw := dateLayouts[l].twin; tw >= 0 && c.dCount[tw] == n {
			cp.Warnings = append(cp.Warnings, "day/month order ambiguous: every value also parses as "+dateLayouts[tw].display)
		}
		if bad := c.kinds[kDate] - n; bad > 0 {
			w := fmt.Sprintf("%d values do not parse as %s", bad, cp.Format)
			for _, e := range c.dExam {
				if e.l1 != l && e.l2 != l && cls == ClassNone {
					w += fmt.Sprintf(" (e.g. %q)", e.s)
					break
				}
			}
			cp.Warnings = append(cp.Warnings, w)
		}
	}
	if main != nil {
		// report values not of the main kind
		for k := range nKinds {
			if slices.Contains(main, kind(k)) || c.kinds[k] == 0 {
				continue
			}
			w := fmt.Sprintf("%d values are %s, not %s", c.kinds[k], kindNames[k], cp.Type)
			if cls == ClassNone {
				w += fmt.Sprintf(" (e.g. %q)", c.examples[k])
			}
			cp.Warnings = append(cp.Warnings, w)
		}
	}
	// Sorting thousands of distinct numbers or dates costs more than the
	// rest of their profile, and only catalogs need the order: sort there.
	sc := c.valueCounts()
	if main == nil {
		ratio := float64(cp.Distinct) / float64(nn)
		switch {
		case cp.Distinct <= 50 || (ratio <= 0.1 && cp.Distinct <= 2000 && c.lenMax <= 60):
			cp.Type = TypeCategorical
		case ratio >= 0.9 && c.lenMax <= 64 && float64(c.spaces) <= 0.05*float64(nn):
			cp.Type = TypeIdentifier
		case float64(c.spaces) <= 0.05*float64(nn) && c.lenMax <= 40:
			cp.Type = TypeIdentifier
		default:
			cp.Type = TypeText
		}
		if c.lead0 > 0 && cp.Type != TypeCategorical {
			cp.Type = TypeIdentifier
		}
	}
	switch cp.Type {
	case TypeInteger, TypeDecimal:
		var w string
		if cp.Unit, w = c.unit(); w != "" {
			cp.Warnings = append(cp.Warnings, w)
		}
		if c.parens > 0 {
			cp.Warnings = append(cp.Warnings, fmt.Sprintf("%d negative numbers are written in parentheses, as (1,234.50)", c.parens))
		}
		a := &c.num
		if readGrouped && c.grouped != nil {
			a = c.grouped
		}
		st := &NumStats{Min: a.min, Max: a.max, Mean: a.mean, Zeros: a.zeros, Negatives: a.negs}
		if a.n > 1 {
			st.Std = math.Sqrt(a.m2 / float64(a.n-1))
		}
		st.Quantiles, st.QuantilesExact = c.numQuantiles(a, readGrouped)
		cp.Numeric = st
	case TypeCode:
		cp.Range = []string{num(c.num.min, true), num(c.num.max, true)}
	case TypeDate, TypeDateTime, TypeTime:
		layout := "2006-01-02"
		switch cp.Type {
		case TypeTime:
			layout = dateLayouts[dateL].layout // a time of day, no date
		case TypeDateTime:
			layout = "2006-01-02 15:04:05"
		}
		f := func(u float64) string { return time.Unix(int64(u), 0).UTC().Format(layout) }
		ds := &DateStats{Min: f(c.dMin[dateL]), Max: f(c.dMax[dateL])}
		qs := c.exactDateQuantiles(dateL)
		if c.overflow && c.dSk[dateL] != nil {
			qs = c.dSk[dateL].quantiles(QuantileRanks)
		}
		for _, v := range qs {
			ds.Quantiles = append(ds.Quantiles, f(v))
		}
		cp.Dates = ds
	}
	if c.lenMax > 0 {
		cp.Lengths = &LengthStats{Min: c.lenMin, Max: c.lenMax, Mean: round(float64(c.lenSum)/float64(nn), 1)}
	}
	if cp.Type == TypeIdentifier || cp.Type == TypeCategorical || cp.Type == TypeText || cp.Type == TypeCode {
		cp.Patterns = c.patterns(nn)
	}
	if cls == ClassNone && len(sc) <= 2000 {
		// mask before choosing what to list, so a mask's count is whole
		sc = c.mask.counts(sc)
	}
	switch cp.Type {
	case TypeCategorical, TypeBoolean, TypeText, TypeIdentifier, TypeCode:
		sortCounts(sc)
		c.catalog(cp, sc, nn)
	case TypeInteger, TypeDecimal, TypeDate, TypeDateTime, TypeTime:
		// a short catalog is worth listing whatever the type
		if !c.overflow && len(sc) <= catalogTop {
			sortCounts(sc)
			cp.Top = sc
		}
	}
	cp.Placeholders = placeholders(cp, sc)
	if cp.Type != TypeDecimal && cp.Type != TypeText && cp.Type != TypeBoolean {
		js := &JoinSketch{Exact: !c.overflow || !c.join.full()}
		if !c.overflow {
			c.idx.each(func(h uint64, i int32) { c.joinAdd(h, c.info[i].cls) })
			js.Exact = !c.join.full()
		}
		js.Hashes = slices.Clone(c.join.h)
		cp.Join = js
	}
	if cls != ClassNone {
		withhold(cp, c.pii.summary(cls, clsShare, nn))
	} else {
		c.mask.catalog(cp)
		cp.Placeholders = c.mask.counts(cp.Placeholders)
	}
	return cp
}

// withhold marks cp sensitive and drops every value it holds: catalog,
// numeric range and quantiles, dates beyond their years, text patterns
// and the join sketch.
func withhold(cp *ColumnProfile, s *Sensitive) {
	cp.Sensitive = s
	cp.Top, cp.Rare, cp.OtherCount = nil, nil, 0
	cp.Numeric, cp.Patterns, cp.Join = nil, nil, nil
	if d := cp.Dates; d != nil {
		cp.Dates = nil
		if s.class == ClassBirthDate {
			cp.Dates = &DateStats{Min: d.Min[:4], Max: d.Max[:4]}
		}
	}
}

func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// unit returns the unit every number of the column is written with, and
// a warning when only some are written with one.
func (c *colAcc) unit() (unit, warning string) {
	var total int64
	for _, n := range c.unitCounts {
		total += n
	}
	var some []string
	for u, n := range c.unitCounts {
		switch {
		case n == total && total > 0:
			return units[u], ""
		case u > 0 && n > 0:
			some = append(some, fmt.Sprintf("%d with %s", n, units[u]))
		}
	}
	if len(some) == 0 {
		return "", ""
	}
	return "", fmt.Sprintf("of %d numbers, %s; the figures leave the signs out", total, strings.Join(some, ", "))
}

// numQuantiles returns the quantiles of the numbers accumulated in a,
// read with ',' between thousands when grouped.
func (c *colAcc) numQuantiles(a *numAcc, grouped bool) ([]Quantile, bool) {
	var out []Quantile
	if !c.overflow {
		qs := c.quantilesOf(func(vi *valInfo) (float64, bool) {
			if grouped {
				return groupedValue(vi), vi.kind.number()
			}
			return vi.f, vi.kind.number()
		})
		for i, v := range qs {
			out = append(out, Quantile{QuantileRanks[i], v})
		}
		return out, true
	}
	for i, v := range a.sketch.quantiles(QuantileRanks) {
		out = append(out, Quantile{QuantileRanks[i], v})
	}
	return out, false
}

// exactDateQuantiles computes the date quantiles under layout l.
func (c *colAcc) exactDateQuantiles(l int8) []float64 {
	return c.quantilesOf(func(vi *valInfo) (float64, bool) {
		if vi.kind != kDate {
			return 0, false
		}
		return dateValue(vi, l)
	})
}

// quantilesOf computes the values at QuantileRanks over the exactly
// counted values for which val reports a number.
func (c *colAcc) quantilesOf(val func(*valInfo) (float64, bool)) []float64 {
	type vc struct {
		v float64
		n int64
	}
	var vs []vc
	var total int64
	for i := range c.info {
		if v, ok := val(&c.info[i]); ok {
			vs = append(vs, vc{v, c.counts[i]})
			total += c.counts[i]
		}
	}
	if total == 0 {
		return nil
	}
	rank := func(q float64) int64 { return max(int64(math.Ceil(q*float64(total))), 1) }
	var out []float64
	if total <= 2*int64(len(vs)) {
		// Mostly distinct values, the costly case to sort, sort faster as
		// plain numbers, each as often as it was counted.
		all := make([]float64, 0, total)
		for _, x := range vs {
			for range x.n {
				all = append(all, x.v)
			}
		}
		slices.Sort(all)
		for _, q := range QuantileRanks {
			out = append(out, all[rank(q)-1])
		}
		return out
	}
	slices.SortFunc(vs, func(a, b vc) int { return cmp.Compare(a.v, b.v) })
	for _, q := range QuantileRanks {
		target := rank(q)
		var cum int64
		for _, x := range vs {
			cum += x.n
			if cum >= target {
				out = append(out, x.v)
				break
			}
		}
	}
	return out
}

func (c *colAcc) patterns(nn int64) []string {
	var out []string
	if float64(c.emails) >= 0.5*float64(nn) {
		out = append(out, fmt.Sprintf("email %.0f%%", 100*float64(c.emails)/float64(nn)))
	}
	if float64(c.urls) >= 0.5*float64(nn) {
		out = append(out, fmt.Sprintf("url %.0f%%", 100*float64(c.urls)/float64(nn)))
	}
	if c.shapesOver || len(c.shapes) == 0 {
		return out
	}
	var all []ValueCount
	var total int64
	for i, s := range c.shapeNames {
		n := c.shapeCounts[i]
		all = append(all, ValueCount{Value: s, Count: n})
		total += n
	}
	if float64(total) < 0.9*float64(c.kinds[kText]) {
		return out
	}
	sortCounts(all)
	// code-like: a few shapes with digits or upper-case runs cover ≥90%
	var cov int64
	var shapes []string
	for _, s := range all[:min(3, len(all))] {
		if !strings.ContainsAny(s.Value, "9") {
			continue
		}
		cov += s.Count
		shapes = append(shapes, s.Value)
	}
	if len(shapes) > 0 && float64(cov) >= 0.9*float64(c.kinds[kText]) {
		out = append(out, "code-like "+strings.Join(shapes, "|"))
	}
	return out
}

// catalogMax is the longest catalog kept complete; a column with more
// distinct values keeps its catalogTop most frequent and up to rareMax
// rare values.
const (
	catalogMax = 30
	catalogTop = 20
	rareMax    = 5
)

// catalog fills Top, Rare and OtherCount from the value counts sc.
//
// With exact counts, a catalog of at most catalogMax values is kept
// whole; a longer one keeps its most frequent values and, as Rare, its
// rarest ones when they hold at most 1% of the rows. Unique columns of
// more than catalogTop values list nothing, free text only values that
// repeat.
//
// After overflow, Top holds only values whose count is guaranteed: a
// listed value's lower bound is at least the upper bound of every value
// not listed, so no unlisted value can be more frequent. OtherCount is
// then 0 (unknown).
func (c *colAcc) catalog(cp *ColumnProfile, sc []ValueCount, nn int64) {
	if c.overflow {
		cp.Top = guaranteedTop(sc, c.ss, catalogTop)
		return
	}
	switch {
	case cp.Unique && len(sc) > catalogTop:
		return
	case len(sc) <= catalogMax:
		cp.Top = sc
		return
	case cp.Type == TypeText || cp.Type == TypeIdentifier:
		for _, v := range sc[:catalogTop] {
			if v.Count > 1 {
				cp.Top = append(cp.Top, v)
			}
		}
	default:
		cp.Top = sc[:catalogTop]
		for i := len(sc) - 1; i >= catalogTop && len(cp.Rare) < rareMax; i-- {
			if sc[i].Count*100 > nn {
				break
			}
			cp.Rare = append(cp.Rare, sc[i])
		}
	}
	var listed int64
	for _, v := range cp.Top {
		listed += v.Count
	}
	for _, v := range cp.Rare {
		listed += v.Count
	}
	cp.OtherCount = max(nn-listed, 0)
}

// guaranteedTop returns, from counts that are exact or ranges [Min,
// Count], the longest prefix (at most k) of values by lower bound such
// that each listed value's lower bound is at least the upper bound of
// every value not listed, including values the sketch does not monitor
// (at most its minimum count once it is full).
func guaranteedTop(sc []ValueCount, ss *spaceSaving, k int) []ValueCount {
	lo := lowerBound
	vs := slices.Clone(sc)
	slices.SortStableFunc(vs, func(a, b ValueCount) int { return cmp.Compare(lo(b), lo(a)) })
	var unmonitored int64
	if len(ss.ent) == ss.cap && len(ss.counts) > 0 {
		unmonitored = ss.counts[0]
	}
	// suffix maximum of the upper bounds
	suf := make([]int64, len(vs)+1)
	suf[len(vs)] = unmonitored
	for i := len(vs) - 1; i >= 0; i-- {
		suf[i] = max(suf[i+1], vs[i].Count)
	}
	var out []ValueCount
	for i, v := range vs {
		if i >= k || lo(v) < suf[i+1] || lo(v) < 2 {
			break
		}
		out = append(out, v)
	}
	return out
}

// compositeKeys names the pairs that identify rows: no column of a pair
// is a key alone or a decimal, text or empty column; at most two pairs,
// fewest combinations first. Below minKeyRows rows a unique pair is too
// likely a coincidence to report.
func compositeKeys(tp *TableProfile, pairs [][2]int) [][]string {
	if tp.Rows < minKeyRows {
		return nil
	}
	ok := func(c *ColumnProfile) bool {
		switch c.Type {
		case TypeDecimal, TypeText, TypeEmpty:
			return false
		}
		return !c.Unique
	}
	var out [][2]int
	for _, pr := range pairs {
		if pr[1] < len(tp.Columns) && ok(tp.Columns[pr[0]]) && ok(tp.Columns[pr[1]]) {
			out = append(out, pr)
		}
	}
	size := func(pr [2]int) int64 { return tp.Columns[pr[0]].Distinct * tp.Columns[pr[1]].Distinct }
	slices.SortStableFunc(out, func(a, b [2]int) int { return cmp.Compare(size(a), size(b)) })
	var names [][]string
	for _, pr := range out[:min(2, len(out))] {
		names = append(names, []string{tp.Columns[pr[0]].Name, tp.Columns[pr[1]].Name})
	}
	return names
}

const minKeyRows = 100

// rowAcc computes row-level facts: duplicate rows, the content
// fingerprint and sample candidates.
type rowAcc struct {
	mask   masker // masks the sample rows' values
	set    *u64set
	dups   int64
	capped bool
	fp     [32]byte
	fpHash uint64
	cands  []sampleRow
	kept   int // bytes the candidates hold
	hs     []uint64
	lead   []int    // addBlank's rows to hash
	xs     []uint64 // and their hashes
	pairs  pairAcc
}

// sampleRow is a candidate sample row. Its cells are copied into one
// string: a value from a batch's buffers would keep the whole batch
// alive, and a string per cell would cost the collector a pointer each.
// A cell longer than sampleKeep bytes is kept as it is shown, masked and
// clipped, and long marks it; like the value it stands for, it then
// differs from every value shown.
type sampleRow struct {
	text string
	ends []int32 // cell ci is text[ends[ci-1]:ends[ci]]
	long []bool  // nil when no cell is long
}

func (s *sampleRow) cell(ci int) string {
	start := int32(0)
	if ci > 0 {
		start = s.ends[ci-1]
	}
	return s.text[start:s.ends[ci]]
}

// The sample rows are picked among the first sampleWindow rows, or as
// many as their cells fill sampleBytes with (only rows of hundreds of
// long cells do).
const (
	rowSetLimit   = 3 << 20 // distinct rows tracked exactly: a 32 MiB table at 3/4 load
	sampleWindow  = 2000
	sampleBytes   = 32 << 20
	sampleCellLen = 40
	sampleKeep    = scanWindow // longer cells are kept as shown
)

func newRowAcc() *rowAcc { return &rowAcc{set: newU64Set(rowSetLimit)} }

func (r *rowAcc) addBatch(cols []arrow.Array, n int) {
	if cap(r.hs) < n {
		r.hs = make([]uint64, n)
	}
	hs := r.hs[:n]
	for i := range hs {
		hs[i] = 0x9e3779b97f4a7c15
	}
	for ci := 0; ci < len(cols); ci++ {
		if blank(cols[ci]) {
			// Columns with no value in this batch (absent, or all null:
			// a wide header over short rows, JSON records without these
			// keys) are hashed a run at a time, and a row hashed as the
			// row before it gives its hash again.
			end := ci + 1
			for end < len(cols) && blank(cols[end]) {
				end++
			}
			r.addBlank(cols, ci, end, hs)
			ci = end - 1
			continue
		}
		r.addColumn(cols[ci], ci, hs)
	}
	r.pairs.end(cols, n)
	for i, h := range hs {
		r.fpHash = mix64(r.fpHash, h)
		dup, refused := r.set.insert(h)
		if dup {
			r.dups++
		} else if refused {
			r.capped = true
		}
		if len(r.cands) < sampleWindow && r.kept < sampleBytes {
			r.addCandidate(cols, i)
		}
	}
	for i := range 8 {
		r.fp[i] = byte(r.fpHash >> (8 * i))
	}
}

// nullSalt makes a null cell's hash from its column's salt.
const nullSalt = 0x51afd7ed558ccd

// addColumn hashes the cells of column ci, which holds values, into
// the row hashes hs, eight nulls at a time where it can.
func (r *rowAcc) addColumn(a arrow.Array, ci int, hs []uint64) {
	n := len(hs)
	salt := uint64(ci + 1)
	null := salt * nullSalt
	s, isStr := a.(*array.String)
	keep := r.pairs.store(ci, n)
	var dst []uint64
	if keep > 0 {
		dst = r.pairs.slot(ci, keep)
	}
	bits := a.NullBitmapBytes() // read here: a.IsNull costs more than the hash
	if len(bits) == 0 {
		bits = nil
	}
	off := a.Data().Offset()
	for i := 0; i < n; i++ {
		if j := off + i; bits != nil && bits[j>>3]&(1<<(j&7)) == 0 {
			if j&7 == 0 && i+8 <= n && bits[j>>3] == 0 {
				for k := i; k < i+8; k++ {
					hs[k] = mix64(hs[k]^salt, null)
				}
				for range max(min(i+8, keep)-i, 0) {
					dst = append(dst, 0)
				}
				i += 7
				continue
			}
			hs[i] = mix64(hs[i]^salt, null)
			if i < keep {
				dst = append(dst, 0)
			}
			continue
		}
		var v uint64
		if isStr {
			t := trimSpace(s.Value(i))
			v = hash64(unsafeBytes(t))
			if i < keep {
				if missing(t) {
					dst = append(dst, 0)
				} else {
					dst = append(dst, v|1)
				}
			}
		} else {
			v = hash64([]byte(valueString(a, i)))
			if i < keep {
				dst = append(dst, v|1)
			}
		}
		hs[i] = mix64(hs[i]^salt, v)
	}
	if keep > 0 {
		r.pairs.put(ci, dst)
	}
}

// addBlank hashes the cells of columns [from, to), which hold no value,
// into the row hashes hs: an absent column mixes in its salt, a null
// cell its null hash, as addColumn does cell by cell. A row whose hash
// so far is the row before's gets that row's hash again; the others are
// hashed column by column, which lets the processor overlap them.
func (r *rowAcc) addBlank(cols []arrow.Array, from, to int, hs []uint64) {
	for ci := from; ci < to; ci++ {
		if cols[ci] == nil {
			continue
		}
		if keep := r.pairs.store(ci, len(hs)); keep > 0 {
			dst := r.pairs.slot(ci, keep)
			r.pairs.put(ci, append(dst, make([]uint64, keep)...))
		}
	}
	lead, xs := r.lead[:0], r.xs[:0]
	for i, h := range hs {
		if i == 0 || h != hs[i-1] {
			lead = append(lead, i)
			xs = append(xs, h)
		}
	}
	r.lead, r.xs = lead, xs
	for len(xs) > 0 {
		// a block of rows at a time, which the cache holds through the
		// columns
		block := xs[:min(len(xs), 512)]
		xs = xs[len(block):]
		for ci := from; ci < to; ci++ {
			salt := uint64(ci + 1)
			if cols[ci] == nil {
				for k := range block {
					block[k] = mix64(block[k], salt)
				}
				continue
			}
			null := salt * nullSalt
			for k := range block {
				block[k] = mix64(block[k]^salt, null)
			}
		}
	}
	xs = r.xs[:len(lead)]
	k := 0
	for i := range hs {
		if k < len(lead) && lead[k] == i {
			hs[i] = xs[k]
			k++
		} else {
			hs[i] = hs[i-1]
		}
	}
}

// addCandidate adds row i of cols to the sample candidates.
func (r *rowAcc) addCandidate(cols []arrow.Array, i int) {
	var row sampleRow
	var b strings.Builder
	row.ends = make([]int32, len(cols))
	for ci, a := range cols {
		var v string
		switch {
		case a == nil || a.IsNull(i):
		case isString(a):
			v = trimSpace(a.(*array.String).Value(i))
		default:
			v = valueString(a, i)
		}
		if len(v) > sampleKeep {
			// Masked and clipped now, as pickSamples would: a copy of the
			// whole value could be a mebibyte.
			if row.long == nil {
				row.long = make([]bool, len(cols))
			}
			row.long[ci] = true
			v = clip(r.mask.text(v), sampleCellLen)
		}
		b.WriteString(v)
		row.ends[ci] = int32(b.Len())
	}
	row.text = b.String()
	r.kept += len(row.text) + 4*len(cols)
	r.cands = append(r.cands, row)
}

func isString(a arrow.Array) bool {
	_, ok := a.(*array.String)
	return ok
}

func missing(v string) bool { return v == "" || isNullToken(v) }

// pickSamples chooses up to three rows that differ from each other in as
// many columns as possible, preferring complete rows.
//
// Candidates are masked and clipped only once picked: scanning every
// candidate cell for personal data cost more than the rest of a small
// file's profile.
func (r *rowAcc) pickSamples(ncols int) [][]string {
	var picked [][]string
	used := map[int]bool{}
	for len(picked) < 3 && len(used) < len(r.cands) {
		best, bestScore := -1, -1
		for i, row := range r.cands {
			if used[i] {
				continue
			}
			score := 0
			for ci := range row.ends {
				v := row.cell(ci)
				if missing(v) {
					continue
				}
				score++
				diff := true
				if row.long == nil || !row.long[ci] {
					for _, p := range picked {
						if ci < len(p) && p[ci] == v {
							diff = false
						}
					}
				}
				if diff {
					score += 2
				}
			}
			if score > bestScore {
				best, bestScore = i, score
			}
		}
		used[best] = true
		cand := &r.cands[best]
		row := make([]string, max(ncols, len(cand.ends)))
		for ci := range cand.ends {
			v := cand.cell(ci)
			if cand.long != nil && cand.long[ci] {
				row[ci] = v
			} else {
				row[ci] = clip(r.mask.text(v), sampleCellLen)
			}
		}
		picked = append(picked, row)
	}
	return picked
}
