package profiler

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/selmem/selmem/internal/egress"
)

// memoryOf profiles src and returns its profile, the most heap that stayed
// live through a garbage collection at a batch boundary and the bytes
// allocated in all, both less what was live before. The live figure is
// what Profile holds at once (batches, accumulators, anything kept from
// earlier batches); the allocated one also counts what a reader builds
// and drops before the first batch.
func memoryOf(t *testing.T, src Source) (tp *TableProfile, live, alloc uint64) {
	t.Helper()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, total := ms.HeapAlloc, ms.TotalAlloc
	opts := &Options{Progress: func(int64, int64) {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > base {
			live = max(live, ms.HeapAlloc-base)
		}
	}}
	tp, err := Profile(context.Background(), src, opts)
	if err != nil {
		t.Fatalf("Profile: %v", err)
	}
	runtime.ReadMemStats(&ms)
	return tp, live, ms.TotalAlloc - total
}

// writeGzip writes a gzip file of the text gen writes, which is large
// but repetitive: the tests' inputs are a few KiB on disk.
func writeGzip(t *testing.T, name string, gen func(w *bufio.Writer)) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(zw, 1<<20)
	gen(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

const mib = 1 << 20

// wideOverhead is what a source of 1,000 columns holds whatever its rows:
// the sample-row window (sampleWindow rows of 1,000 cell ends of 4
// bytes) and the pair screening's cell hashes (pairSample rows of 8
// bytes), about 24 MiB. wideAlloc is what such a source allocates in
// all, rows aside: those twice over (the screening copies its hashes)
// and the first batches, whose buffers grow by appending.
const (
	wideOverhead = 24 * mib
	wideAlloc    = 2*wideOverhead + 6*batchBytes
)

// TestProfile_ShortRowsMemory: a CSV whose rows are much shorter than its
// header (or wide rows of empty fields) costs a bounded batch, not a
// batch of 65,536 rows of padded cells: the batch cap counts each cell's
// offset and validity bit, of every column a later row could set, and a
// column no row of a batch sets costs nothing. The rows are still
// profiled as rows with missing fields.
func TestProfile_ShortRowsMemory(t *testing.T) {
	header := make([]string, MaxColumns)
	for i := range header {
		header[i] = fmt.Sprintf("c%d", i)
	}
	tests := []struct {
		name  string
		rows  int
		row   func(i int) string
		short bool // rows have fewer fields than the header
	}{
		{"one field", 200000, func(int) string { return "x" }, true},
		{"one distinct field", 200000, func(i int) string { return fmt.Sprint(i) }, true},
		{"two fields", 200000, func(i int) string { return fmt.Sprintf("%d,y", i) }, true},
		{"all fields empty", 30000, func(int) string { return strings.Repeat(",", MaxColumns-1) }, false},
		// A full row late in a batch of short ones sets every column:
		// the rows before it are nulls of each.
		{"a full row after short ones", 200000, func(i int) string {
			if i%50000 == 49999 {
				return strings.TrimSuffix(strings.Repeat("z,", MaxColumns), ",")
			}
			return "x"
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeGzip(t, "short.csv.gz", func(w *bufio.Writer) {
				w.WriteString(strings.Join(header, ",") + "\n")
				for i := range tt.rows {
					w.WriteString(tt.row(i) + "\n")
				}
			})
			tp, live, alloc := memoryOf(t, FileSource{Path: p})
			t.Logf("live %d MiB, allocated %d MiB", live/mib, alloc/mib)
			// Two batches of batchBytes at most (the one profiled and
			// the one being read) beside the wide source's overhead.
			if limit := uint64(wideOverhead + 2*batchBytes + 16*mib); live > limit {
				t.Errorf("%d rows held %d MiB live, want at most %d MiB", tt.rows, live/mib, limit/mib)
			}
			if got, want := tp.Rows, int64(tt.rows); got != want {
				t.Errorf("rows = %d, want %d", got, want)
			}
			last := tp.Columns[MaxColumns-1]
			if tt.short {
				short := int64(0)
				for i := range tt.rows {
					if strings.Count(tt.row(i), ",")+1 < MaxColumns {
						short++
					}
				}
				if got, want := last.Nulls, short; got != want {
					t.Errorf("last column nulls = %d, want %d", got, want)
				}
				if w := strings.Join(tp.Warnings, "; "); !strings.Contains(w, fmt.Sprintf("%d rows had fewer fields", short)) {
					t.Errorf("warnings %q, want the short rows counted", w)
				}
			} else if got, want := last.Empty, int64(tt.rows); got != want {
				t.Errorf("last column empty = %d, want %d", got, want)
			}
		})
	}
}

// TestProfile_LargeFieldsNotRetained: values kept past their batch (the
// sample-row candidates, examples) are copies of at most a few hundred
// bytes, so a file of large fields holds a batch or two, not every batch
// whose rows are sample candidates.
func TestProfile_LargeFieldsNotRetained(t *testing.T) {
	const rows, size = 1000, 128 << 10
	big := strings.Repeat("x", size)
	tests := []struct {
		name, file string
		row        func(i int) string
	}{
		{"csv", "big.csv.gz", func(i int) string { return fmt.Sprintf("%d,%s\n", i, big) }},
		{"json lines", "big.jsonl.gz", func(i int) string { return fmt.Sprintf("{\"a\":%d,\"b\":%q}\n", i, big) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeGzip(t, tt.file, func(w *bufio.Writer) {
				if tt.name == "csv" {
					w.WriteString("a,b\n")
				}
				for i := range rows {
					w.WriteString(tt.row(i))
				}
			})
			tp, live, alloc := memoryOf(t, FileSource{Path: p})
			t.Logf("live %d MiB, allocated %d MiB", live/mib, alloc/mib)
			// rows*size is 125 MiB; two batches are 16 MiB.
			if limit := uint64(2*batchBytes + 16*mib); live > limit {
				t.Errorf("%d rows of %d KiB held %d MiB live, want at most %d MiB", rows, size>>10, live/mib, limit/mib)
			}
			if got, want := tp.Rows, int64(rows); got != want {
				t.Errorf("rows = %d, want %d", got, want)
			}
			if len(tp.Samples) == 0 {
				t.Fatal("no sample rows")
			}
			if got, want := tp.Samples[0][1], strings.Repeat("x", sampleCellLen-1)+"…"; got != want {
				t.Errorf("sample cell %q, want %q", got, want)
			}
		})
	}
}

// TestRESTSource_Memory: a REST response is read once, its records one at
// a time, so memory follows the response's size, not the number of JSON
// values in it or its records times its columns.
func TestRESTSource_Memory(t *testing.T) {
	keys := make([]string, MaxColumns)
	for i := range keys {
		keys[i] = fmt.Sprintf("%q:1", fmt.Sprintf("k%d", i))
	}
	wide := "{" + strings.Join(keys, ",") + "}"
	tests := []struct {
		name  string
		body  string
		rows  int64
		limit uint64 // bytes allocated in all
	}{
		// 8 million numbers in one record's array: decoded as values
		// they took 25 times the response.
		{"one record of a long array", `[{"a":[1` + strings.Repeat(",1", 8<<20) + `]}]`, 1, 4 * 16 * mib},
		// A record of 1,000 keys, then empty ones: every record a row
		// of 1,000 cells. They took 12 KiB each.
		{"wide record then empty ones", "[" + wide + strings.Repeat(",{}", 100000) + "]", 100001, wideAlloc},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			policy, err := egress.New(egress.Config{AllowedHosts: []string{"127.0.0.1"}})
			if err != nil {
				t.Fatal(err)
			}
			tp, live, alloc := memoryOf(t, RESTSource{URL: srv.URL + "/records", Policy: policy})
			t.Logf("live %d MiB, allocated %d MiB", live/mib, alloc/mib)
			if alloc > tt.limit {
				t.Errorf("a response of %d KiB allocated %d MiB, want at most %d MiB", len(tt.body)>>10, alloc/mib, tt.limit/mib)
			}
			if got := tp.Rows; got != tt.rows {
				t.Errorf("rows = %d, want %d", got, tt.rows)
			}
		})
	}
}

// sketchMax is the most a column's sketches hold once it no longer
// counts exactly: a HyperLogLog of 16 KiB, 256 heavy hitters with a copy
// of each value (up to 200 bytes) and their hash table, a join sketch.
const sketchMax = 100 << 10

// TestProfile_WideDistinctMemory: the exact counts of all columns
// together stay within exactMemory whatever the file's shape: columns of
// distinct values, short or long (a value of 300 bytes is counted under a
// key as long as a mebibyte's), switch to the sketches once their share
// is spent. The budget is lowered so that a file of tens of MiB outgrows
// it; without it, these held 127, 115 and 278 MiB.
func TestProfile_WideDistinctMemory(t *testing.T) {
	defer func(m int64) { exactMemory = m }(exactMemory)
	exactMemory = 8 * mib
	tests := []struct {
		name             string
		cols, rows, size int
	}{
		{"short values", 100, 6000, 16},
		{"long values", 100, 3000, 300},
		{"a thousand columns", 1000, 1200, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pad := strings.Repeat("x", tt.size-16)
			p := writeGzip(t, "wide.csv.gz", func(w *bufio.Writer) {
				for c := range tt.cols {
					fmt.Fprintf(w, "c%d%s", c, sep(c, tt.cols))
				}
				for r := range tt.rows {
					for c := range tt.cols {
						fmt.Fprintf(w, "%08x%s%08x%s", uint32(r)*2654435761^uint32(c), pad, r, sep(c, tt.cols))
					}
				}
			})
			tp, live, alloc := memoryOf(t, FileSource{Path: p})
			t.Logf("live %d MiB, allocated %d MiB", live/mib, alloc/mib)
			// The exact counts, two batches, the sample-row candidates,
			// what a wide source holds besides, the columns' sketches,
			// and 8 MiB for the reader and the rest.
			limit := uint64(exactMemory) + uint64(2*batchBytes+sampleBytes+wideOverhead*tt.cols/MaxColumns+tt.cols*sketchMax+8*mib)
			if live > limit {
				t.Errorf("%d columns of %d distinct values held %d MiB live, want at most %d MiB", tt.cols, tt.rows, live/mib, limit/mib)
			}
			c := tp.Columns[0]
			if got, want := tp.Rows, int64(tt.rows); got != want {
				t.Errorf("rows = %d, want %d", got, want)
			}
			if c.DistinctExact || math.Abs(float64(c.Distinct-int64(tt.rows))) > 0.03*float64(tt.rows) {
				t.Errorf("distinct = %d (exact %v), want about %d from the sketch", c.Distinct, c.DistinctExact, tt.rows)
			}
		})
	}
}

// sep is what follows field i of a CSV row of n fields.
func sep(i, n int) string {
	if i == n-1 {
		return "\n"
	}
	return ","
}
