package profiler

import (
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// columnarMemory bounds the Arrow memory a columnar reader holds at once:
// a message body, decompressed buffers, a Parquet row group's pages. A
// variable so that tests can lower it.
var columnarMemory int64 = 1 << 30

// budgetAllocator hands out Arrow memory while at most limit bytes are
// live, and panics beyond it. A malformed columnar file can claim a
// buffer of any size (a message body, a decompressed length); refusing
// the claim is an error of Profile, where an allocation the machine
// cannot make would end the process.
type budgetAllocator struct {
	mem   memory.Allocator
	limit int64
	live  atomic.Int64
}

func newBudgetAllocator(limit int64) *budgetAllocator {
	return &budgetAllocator{mem: memory.NewGoAllocator(), limit: limit}
}

// overBudget is the panic of a refused allocation.
type overBudget struct{ want, live, limit int64 }

func (o overBudget) String() string {
	return fmt.Sprintf("it claims a buffer of %d bytes while %d are in use, beyond the profiler's bound of %d", o.want, o.live, o.limit)
}

func (a *budgetAllocator) take(n int64) {
	if live := a.live.Add(n); n > 0 && live > a.limit {
		a.live.Add(-n)
		panic(overBudget{want: n, live: live - n, limit: a.limit})
	}
}

// Allocate implements memory.Allocator.
func (a *budgetAllocator) Allocate(size int) []byte {
	if size < 0 {
		panic(fmt.Sprintf("it claims a buffer of %d bytes", size))
	}
	a.take(int64(size))
	return a.mem.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a *budgetAllocator) Reallocate(size int, b []byte) []byte {
	a.take(int64(size - len(b)))
	return a.mem.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a *budgetAllocator) Free(b []byte) {
	a.live.Add(-int64(len(b)))
	a.mem.Free(b)
}
