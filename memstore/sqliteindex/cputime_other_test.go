//go:build !(linux || darwin)

package sqliteindex_test

import (
	"testing"
	"time"
)

// cpuTime returns 0: the process CPU clock is read on Linux and macOS only.
func cpuTime(*testing.B) time.Duration { return 0 }
