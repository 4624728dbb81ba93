package main

import (
	"os"
	"runtime/debug"
)

// The collector's settings for selmem serve when neither GOGC nor
// GOMEMLIMIT is set. A server's live heap is small next to what one
// request allocates (a 10,000-row refresh allocates some 20 MB), so at
// Go's default (GOGC 100) the collector ran several times per refresh and
// took a fifth of its CPU time; at 400 it runs a quarter as often. The
// soft memory limit makes it collect sooner again before the heap passes
// 1 GiB, so a large embedded index does not grow the heap fivefold.
const (
	serveGCPercent   = 400
	serveMemoryLimit = 1 << 30
)

// tuneGC applies the collector's settings for selmem serve, unless the
// environment sets them (GOGC, GOMEMLIMIT), which then take effect as Go
// defines them.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(serveGCPercent)
	debug.SetMemoryLimit(serveMemoryLimit)
}
