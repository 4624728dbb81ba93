package profiler

import (
	"strconv"
	"testing"
)

// TestColAcc_ExactRoom: a column's exact tracking stays within its room:
// its counts switch to the sketches, its key set stops taking members
// and uniqueness becomes an estimate, which still holds for distinct
// values.
func TestColAcc_ExactRoom(t *testing.T) {
	tests := []struct {
		name     string
		limit    int
		room     func(c *colAcc) int64 // after the first limit values
		overflow bool
		keyCap   bool
		frozen   bool // the key set stopped taking members
	}{
		{"ample", 10000, func(c *colAcc) int64 { return exactMemory }, false, false, false},
		{"counts", 10000, func(c *colAcc) int64 { return 64 << 10 }, true, true, false},
		{"key set", 100, func(c *colAcc) int64 { return c.exactBytes() + 20<<10 }, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newColAcc("c", tt.limit)
			for i := range 5000 {
				if i == min(tt.limit, 100) {
					c.room = tt.room(c)
				}
				c.add("value-" + strconv.Itoa(i*7919%5003))
			}
			if got := c.exactBytes(); got > c.room {
				t.Errorf("exact tracking holds %d bytes, room %d", got, c.room)
			}
			frozen := c.keySet != nil && c.keySet.frozen()
			if c.overflow != tt.overflow || c.keyCap != tt.keyCap || frozen != tt.frozen {
				t.Errorf("overflow %v, key cap %v, frozen %v; want %v, %v, %v", c.overflow, c.keyCap, frozen, tt.overflow, tt.keyCap, tt.frozen)
			}
			cp := c.finish(false)
			if !cp.Unique || cp.DistinctExact == tt.keyCap {
				t.Errorf("unique %v, distinct %d exact %v; want unique, exact %v", cp.Unique, cp.Distinct, cp.DistinctExact, !tt.keyCap)
			}
		})
	}
}

// TestShareExactMemory: the columns that can still grow share what the
// budget has left equally; the others keep what they hold.
func TestShareExactMemory(t *testing.T) {
	counting, sketched, done := newColAcc("counting", 100), newColAcc("sketched", 100), newColAcc("done", 100)
	for i := range 300 {
		counting.add(strconv.Itoa(i % 50))
		sketched.add("s" + strconv.Itoa(i))
		done.add(strconv.Itoa(i % 150 * 7))
	}
	if counting.overflow || !sketched.overflow || sketched.keySet == nil || !done.keyDead {
		t.Fatalf("overflow %v, %v; key set %v; key dead %v: the columns are not in the states tested",
			counting.overflow, sketched.overflow, sketched.keySet != nil, done.keyDead)
	}
	cols := []*colAcc{counting, sketched, done}
	var used int64
	for _, c := range cols {
		used += c.exactBytes()
	}
	shareExactMemory(cols)
	share := (exactMemory - used) / 2
	for _, c := range cols {
		want := c.exactBytes() + share
		if c == done {
			want = c.exactBytes()
		}
		if c.room != want {
			t.Errorf("column %s: room %d, want %d", c.name, c.room, want)
		}
	}
}
