//go:build linux || darwin

package sqliteindex_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cpuTime returns the CPU time the process has used, every thread's: on a
// machine shared with other work it measures a search's work without the
// time it waited for a core (the parallel vector scan counts every
// worker's time).
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}
