package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	for _, c := range []struct {
		name, gogc, memlimit string
		wantPercent          int
		wantLimit            int64
	}{
		{"defaults", "", "", serveGCPercent, serveMemoryLimit},
		{"GOGC set", "150", "", 100, math.MaxInt64},
		{"GOMEMLIMIT set", "", "512MiB", 100, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOGC", c.gogc)
			t.Setenv("GOMEMLIMIT", c.memlimit)
			prevPercent, prevLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
			defer func() {
				debug.SetGCPercent(prevPercent)
				debug.SetMemoryLimit(prevLimit)
			}()
			tuneGC()
			if got := debug.SetGCPercent(100); got != c.wantPercent {
				t.Errorf("GC percent %d, want %d", got, c.wantPercent)
			}
			if got := debug.SetMemoryLimit(math.MaxInt64); got != c.wantLimit {
				t.Errorf("memory limit %d, want %d", got, c.wantLimit)
			}
		})
	}
}
