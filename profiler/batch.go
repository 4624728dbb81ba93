package profiler

import (
	"slices"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A batch holds up to batchRows rows or batchBytes bytes, its values and
// its columns' offsets and validity bits together (strBatch.size): large
// enough that handing it to the column workers costs little, small
// enough that the two batches in flight stay far below the memory bound
// whatever the rows' shape.
const (
	batchBytes = 8 << 20
	batchRows  = 65536
)

// strBatch builds a record batch of string columns row by row, for the
// text readers (CSV, JSON). A row sets some of its columns; the others
// are null.
//
// A column is materialised (offsets, and validity bits from its first
// null) from the first row that sets it, and the rows it skipped are
// padded as nulls when it is next set or the batch is built. A column
// that no row of the batch sets costs nothing per row: all such columns
// share one buffer of zero offsets and one of null bits. So a short row
// under a wide header, or a record with few of many keys, costs its own
// values, and a batch of many rows of a few values holds no more than
// their cells.
type strBatch struct {
	cols []strCol
	rows int // rows ended
	data int // bytes of values
	live int // materialised columns
}

type strCol struct {
	data  []byte
	offs  []int32 // offs[r+1] ends row r's value; nil while no row sets the column
	valid []byte  // validity bits of the rows in offs; nil while none is null
	nulls int
	// capacities for the next batch's buffers: this batch's lengths and
	// a little more, since the batches of a large file come out alike
	dataHint, offsHint int
}

// strBatch's first buffers of a column, before a batch gives a size.
const (
	firstDataCap = 4096
	firstOffsCap = 1024
)

// widen makes the batch at least n columns wide; the new columns are null
// in the rows so far.
func (b *strBatch) widen(n int) {
	for len(b.cols) < n {
		b.cols = append(b.cols, strCol{})
	}
}

// size is the memory the batch holds once built with cols materialised
// columns: its values, and four bytes of offset and a validity bit per
// row of each. A reader that may yet set every column of a batch (a CSV
// row may hold all fields, after many that held one) checks the size
// with all of them, as setting one pads each row before as a null.
func (b *strBatch) size(cols int) int {
	return b.data + cols*b.rows*4 + cols*(b.rows+7)/8
}

// open readies column ci for a value of the current row: materialises it
// and pads the rows before that did not set it as nulls.
func (b *strBatch) open(ci int) *strCol {
	c := &b.cols[ci]
	if len(c.offs) <= b.rows { // not materialised, or rows to pad
		b.catchUp(c)
	}
	return c
}

// catchUp materialises column c if no row set it yet, and pads it to the
// current row.
func (b *strBatch) catchUp(c *strCol) {
	if c.offs == nil {
		c.data = make([]byte, 0, max(c.dataHint, firstDataCap))
		c.offs = make([]int32, 1, max(c.offsHint, firstOffsCap))
		b.live++
	}
	if n := len(c.offs) - 1; n < b.rows {
		c.pad(n, b.rows)
	}
}

// end ends column ci's value in the current row.
func (b *strBatch) end(ci int) {
	c := b.open(ci)
	c.offs = append(c.offs, int32(len(c.data)))
	if c.valid != nil {
		c.setValid(len(c.offs) - 2)
	}
}

// setValid marks row r as holding a value.
func (c *strCol) setValid(r int) {
	for len(c.valid) <= r/8 {
		c.valid = append(c.valid, 0)
	}
	c.valid[r/8] |= 1 << (r % 8)
}

// set sets column ci of the current row to v; the last of several values
// a row gives a column is the one kept.
func (b *strBatch) set(ci int, v string) {
	c := b.open(ci)
	if len(c.offs)-1 > b.rows {
		start := c.offs[b.rows]
		b.data -= len(c.data) - int(start)
		c.data = c.data[:start]
		c.offs = c.offs[:b.rows+1]
	}
	c.data = append(c.data, v...)
	b.data += len(v)
	b.end(ci)
}

// endRow ends the current row.
func (b *strBatch) endRow() { b.rows++ }

// pad adds rows from..to-1 as nulls.
func (c *strCol) pad(from, to int) {
	at := len(c.offs)
	c.offs = slices.Grow(c.offs, to-from)[:at+to-from]
	end, tail := int32(len(c.data)), c.offs[at:]
	for i := range tail {
		tail[i] = end
	}
	if c.valid == nil {
		// the rows so far all hold a value
		c.valid = make([]byte, (from+7)/8, max((to+7)/8, c.offsHint/8))
		for i := range from / 8 {
			c.valid[i] = 0xff
		}
		if from%8 != 0 {
			c.valid[from/8] = 1<<(from%8) - 1
		}
	}
	for len(c.valid) < (to+7)/8 {
		c.valid = append(c.valid, 0)
	}
	c.nulls += to - from
}

// build returns the rows as a record batch of schema, which names the
// batch's columns, and starts the next batch. With repair, a column's
// invalid UTF-8 is replaced by U+FFFD; bad counts the columns that had
// some.
func (b *strBatch) build(schema *arrow.Schema, repair bool) (rec arrow.RecordBatch, bad int) {
	n := b.rows
	var zeroOffs, nullBits, noData *memory.Buffer // shared by the columns no row set
	cols := make([]arrow.Array, len(b.cols))
	for i := range b.cols {
		c := &b.cols[i]
		var bufs []*memory.Buffer
		nulls := n
		if c.offs == nil {
			if zeroOffs == nil {
				zeroOffs = memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(make([]int32, n+1)))
				nullBits = memory.NewBufferBytes(make([]byte, (n+7)/8))
				noData = memory.NewBufferBytes(nil)
			}
			bufs = []*memory.Buffer{nullBits, zeroOffs, noData}
		} else {
			if r := len(c.offs) - 1; r < n {
				c.pad(r, n)
			}
			data, offs := c.data, c.offs
			if repair && !utf8.Valid(data) {
				data, offs = fixUTF8(data, offs)
				bad++
			}
			var bitmap *memory.Buffer
			if c.nulls > 0 {
				bitmap = memory.NewBufferBytes(c.valid)
			}
			bufs = []*memory.Buffer{bitmap, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), memory.NewBufferBytes(data)}
			nulls = c.nulls
			c.dataHint = len(c.data) + len(c.data)/8
			c.offsHint = min(len(c.offs)+len(c.offs)/8, batchRows+1)
		}
		ad := array.NewData(arrow.BinaryTypes.String, n, bufs, nil, nulls, 0)
		cols[i] = array.NewStringData(ad)
		ad.Release()
	}
	rec = array.NewRecordBatch(schema, cols, int64(n))
	for _, a := range cols {
		a.Release()
	}
	b.discard()
	return rec, bad
}

// discard drops the rows so far (the buffers belong to the batch built
// from them, if any).
func (b *strBatch) discard() {
	for i := range b.cols {
		c := &b.cols[i]
		c.data, c.offs, c.valid, c.nulls = nil, nil, nil, 0
	}
	b.rows, b.data, b.live = 0, 0, 0
}
