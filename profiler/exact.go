package profiler

import "unsafe"

// Memory of the exact counts
//
// Exact counts are bounded across all columns, not only per column
// (Options.ExactDistinct): a wide file of long distinct values would
// otherwise keep gigabytes of them (1,000 columns of 10,000 keys of up
// to 200 bytes, with their facts). Before each batch, every column whose
// exact tracking can still grow gets an equal share of what exactMemory
// has left. A column whose exact counts would outgrow its share switches
// to the sketches, as beyond ExactDistinct; a key set (which tells a
// column's uniqueness after that) that would outgrow it stops taking
// members, and uniqueness becomes an estimate. Shares are given between
// batches from the counts alone, so a profile does not depend on how
// its columns were scheduled. The sketches themselves have a fixed size,
// at most about 100 KiB a column.

// exactMemory is the most bytes the exact counts and key sets of all
// columns hold at once. A variable so that tests can lower it.
var exactMemory int64 = 256 << 20

// exactEntryBytes bounds what counting a value exactly costs besides its
// key's bytes: the key's string header, its count and its facts
// (valInfo) in slices grown by appending (up to twice their length),
// four 12-byte slots of the hash table (which doubles when half full),
// and the key's allocation rounded up to its size class.
const exactEntryBytes = 2*(16+8+int64(unsafe.Sizeof(valInfo{}))) + 4*12 + 16

// entryBytes is what counting key exactly costs.
func entryBytes(key string) int64 {
	return int64(len(key)) + int64(len(key))/8 + exactEntryBytes
}

// exactBytes is what c's exact tracking holds: its exact counts and its
// key set.
func (c *colAcc) exactBytes() int64 {
	n := c.countBytes
	if c.keySet != nil {
		n += c.keySet.bytes()
	}
	return n
}

// growing reports whether c's exact tracking can still take memory: it
// counts values exactly, or it tracks keys (or will once its run of
// increasing integers breaks).
func (c *colAcc) growing() bool {
	return !c.overflow || !c.keyDead && (c.keySet == nil || !c.keySet.frozen())
}

// startKeySet starts the key set when the column has room for it; when
// not, uniqueness is an estimate.
func (c *colAcc) startKeySet() {
	if c.exactBytes()+u64setFirst*8 > c.room {
		c.keyCap = true
		return
	}
	c.keySet = newU64Set(keySetLimit)
}

// keyInsert adds h to the key set, which rather than grow beyond the
// column's room stops taking members.
func (c *colAcc) keyInsert(h uint64) (dup, refused bool) {
	if s := c.keySet; s.wouldGrow() && c.exactBytes()+s.bytes() > c.room {
		s.freeze()
	}
	return c.keySet.insert(h)
}

// shareExactMemory sets the room of each column: what its exact
// tracking holds, and for a column that can still grow an equal share
// of what exactMemory has left.
func shareExactMemory(cols []*colAcc) {
	var used, growing int64
	for _, c := range cols {
		used += c.exactBytes()
		if c.growing() {
			growing++
		}
	}
	share := max(exactMemory-used, 0) / max(growing, 1)
	for _, c := range cols {
		c.room = c.exactBytes()
		if c.growing() {
			c.room += share
		}
	}
}
