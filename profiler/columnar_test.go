package profiler

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// parquetFile returns a small Parquet file of four columns (integer,
// string, list, date) and twenty rows.
func parquetFile(tb testing.TB) []byte {
	tb.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "when", Type: arrow.FixedWidthTypes.Date32},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range 20 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("n" + string(rune('a'+i)))
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append("t")
		b.Field(3).(*array.Date32Builder).Append(arrow.Date32(19000 + i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var out bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &out, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// profileBytes returns a fuzz body that profiles its bytes as the file
// name in dir. Only a crash fails it.
func profileBytes(dir, name string) func(*testing.T, []byte) {
	return func(t *testing.T, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = Profile(context.Background(), FileSource{Path: p}, nil)
	}
}

// FuzzProfile_Parquet profiles any bytes as a Parquet file: a malformed
// file is an error, never a crash of the process. The reader's own
// goroutines once panicked on a dictionary page header missing from a
// page, and, in the goroutines that open a struct's children, on a
// column chunk of negative length (testdata/fuzz): no recover in the
// caller could catch either. Buffers of any size a file claims are
// refused by the profiler's allocator (TestProfile_ColumnarMemory).
func FuzzProfile_Parquet(f *testing.F) {
	f.Add(parquetFile(f))
	dir := f.TempDir()
	f.Fuzz(profileBytes(dir, "x.parquet"))
}

// TestProfile_Parquet profiles a Parquet file of nested and typed columns.
func TestProfile_Parquet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.parquet")
	if err := os.WriteFile(p, parquetFile(t), 0o644); err != nil {
		t.Fatal(err)
	}
	tp, err := Profile(context.Background(), FileSource{Path: p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Rows != 20 || len(tp.Columns) != 4 || tp.Format != "parquet" {
		t.Fatalf("%d rows, %d columns, format %q; want 20, 4, parquet", tp.Rows, len(tp.Columns), tp.Format)
	}
	if c := tp.Columns[3]; c.Name != "when" || c.Type != TypeDate {
		t.Errorf("column %s is %s, want when as a date", c.Name, c.Type)
	}
}

// brokenSource reads one batch of a string column whose offsets point
// past its data once the array is made, as a malformed columnar file can
// make: arrow checks the offsets when the array is made, not when its
// values are read.
type brokenSource struct{}

func (brokenSource) Open(context.Context) (RecordReader, error) { return &brokenReader{}, nil }

type brokenReader struct {
	rec  arrow.RecordBatch
	done bool
}

func (r *brokenReader) Next() bool {
	if r.done {
		return false
	}
	r.done = true
	offsets := []int32{0, 2, 4}
	data := array.NewData(arrow.BinaryTypes.String, 2, []*memory.Buffer{nil,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes([]byte("abcd"))}, nil, 0, 0)
	col := array.NewStringData(data)
	offsets[2] = 1 << 20
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	r.rec = array.NewRecordBatch(schema, []arrow.Array{col}, 2)
	return true
}
func (r *brokenReader) RecordBatch() arrow.RecordBatch { return r.rec }
func (r *brokenReader) Err() error                     { return nil }
func (r *brokenReader) Release()                       {}
func (r *brokenReader) Progress() (int64, int64)       { return 0, 0 }
func (r *brokenReader) Info() ReaderInfo               { return ReaderInfo{Name: "broken"} }

// TestProfile_WorkerPanic: a batch whose arrays make a column worker panic
// is an error of Profile, not a crash of the process.
func TestProfile_WorkerPanic(t *testing.T) {
	_, err := Profile(context.Background(), brokenSource{}, nil)
	if err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("Profile of a malformed batch: %v, want an error saying so", err)
	}

}

// ipcFiles returns an Arrow IPC file and stream of batches batches of
// rows rows each: an integer and a string column.
func ipcFiles(tb testing.TB, batches, rows int, opts ...ipc.Option) (file, stream []byte) {
	tb.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	opts = append(opts, ipc.WithSchema(schema))
	var fb, sb bytes.Buffer
	fw, err := ipc.NewFileWriter(&fb, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	sw := ipc.NewWriter(&sb, opts...)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range batches {
		for j := range rows {
			b.Field(0).(*array.Int64Builder).Append(int64(i*rows + j))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name %d", j%97))
		}
		rec := b.NewRecordBatch()
		for _, w := range []interface{ Write(arrow.RecordBatch) error }{fw, sw} {
			if err := w.Write(rec); err != nil {
				tb.Fatal(err)
			}
		}
		rec.Release()
	}
	if err := fw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		tb.Fatal(err)
	}
	return fb.Bytes(), sb.Bytes()
}

// FuzzProfile_Arrow profiles any bytes as an Arrow IPC file or stream: a
// malformed one is an error, never a crash. The corpus in testdata/fuzz
// keeps inputs that once ended the process: a message body and a
// children vector claiming hundreds of gigabytes.
func FuzzProfile_Arrow(f *testing.F) {
	for _, opts := range [][]ipc.Option{nil, {ipc.WithZstd()}} {
		file, stream := ipcFiles(f, 2, 5, opts...)
		f.Add(file)
		f.Add(stream)
	}
	dir := f.TempDir()
	f.Fuzz(profileBytes(dir, "x.arrow"))
}

// TestProfile_ColumnarMemory: a columnar file is read within the memory
// bound, batch after batch, and one whose buffers exceed the bound is an
// error naming it.
func TestProfile_ColumnarMemory(t *testing.T) {
	defer func(m int64) { columnarMemory = m }(columnarMemory)
	columnarMemory = 256 << 10
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		batches int
		rows    int
		opts    []ipc.Option
		wantErr bool
	}{
		// 50 batches of about 20 KiB: over 1 MiB in all, so memory that
		// is freed but not counted as free would exceed the bound.
		{"many small batches", 50, 1000, nil, false},
		{"many small compressed batches", 50, 1000, []ipc.Option{ipc.WithZstd()}, false},
		// One batch of about 2 MiB, compressed to far less.
		{"one batch over the bound", 1, 100000, []ipc.Option{ipc.WithZstd()}, true},
	} {
		file, stream := ipcFiles(t, tc.batches, tc.rows, tc.opts...)
		for kind, data := range map[string][]byte{"file": file, "stream": stream} {
			p := filepath.Join(dir, "t.arrow")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			tp, err := Profile(context.Background(), FileSource{Path: p}, nil)
			switch {
			case tc.wantErr && (err == nil || !strings.Contains(err.Error(), "beyond the profiler's bound")):
				t.Errorf("%s, %s: %v, want an error naming the bound", tc.name, kind, err)
			case !tc.wantErr && err != nil:
				t.Errorf("%s, %s: %v", tc.name, kind, err)
			case !tc.wantErr && tp.Rows != int64(tc.batches*tc.rows):
				t.Errorf("%s, %s: %d rows, want %d", tc.name, kind, tp.Rows, tc.batches*tc.rows)
			}
		}
	}
}

// TestProfile_GzipColumnar: a gzipped columnar file is spilled and read;
// one that would grow past maxSpillRatio times its size is refused
// before it fills the temporary directory.
func TestProfile_GzipColumnar(t *testing.T) {
	file, _ := ipcFiles(t, 2, 100)
	gz := func(data []byte) []byte {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		if _, err := zw.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "t.arrow.gz")
	if err := os.WriteFile(p, gz(file), 0o644); err != nil {
		t.Fatal(err)
	}
	if tp, err := Profile(context.Background(), FileSource{Path: p}, nil); err != nil || tp.Rows != 200 {
		t.Fatalf("gzipped Arrow file: %v, want 200 rows", err)
	}
	// An Arrow file's magic, then 100 MiB of zeros: about 100 KiB gzipped.
	bomb := append([]byte("ARROW1\x00\x00"), make([]byte, 100<<20)...)
	if err := os.WriteFile(p, gz(bomb), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Profile(context.Background(), FileSource{Path: p}, nil)
	if err == nil || !strings.Contains(err.Error(), "times its compressed size") {
		t.Fatalf("gzip bomb: %v, want a refusal naming the ratio", err)
	}
}

// TestProfile_HugeBatch: a batch is profiled in parts, so that a file of
// a few hundred bytes claiming 2^31-1 rows of an all-null column (the
// most ipcmeta lets through) stops when its profile is cancelled, and a
// batch cut into parts profiles as the same rows in batches of their own.
func TestProfile_HugeBatch(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, schema *arrow.Schema, recs ...arrow.RecordBatch) string {
		var out bytes.Buffer
		w := ipc.NewWriter(&out, ipc.WithSchema(schema))
		for _, rec := range recs {
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	nulls := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.Null, Nullable: true}}, nil)
	const rows = 1<<31 - 1
	p := write("nulls.arrow", nulls, array.NewRecordBatch(nulls, []arrow.Array{array.NewNull(rows)}, rows))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Profile(ctx, FileSource{Path: p}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("profile of 2^31-1 null rows: %v, want it cancelled", err)
	}

	// 3.5 parts in one batch, and the same rows in batches of a part.
	file, _ := ipcFiles(t, 1, 7*maxPartRows/2)
	whole := filepath.Join(dir, "whole.arrow")
	if err := os.WriteFile(whole, file, 0o644); err != nil {
		t.Fatal(err)
	}
	tp, err := Profile(context.Background(), FileSource{Path: whole}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewFileReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	var parts []arrow.RecordBatch
	for off := int64(0); off < rec.NumRows(); off += maxPartRows {
		parts = append(parts, rec.NewSlice(off, min(off+maxPartRows, rec.NumRows())))
	}
	split, err := Profile(context.Background(), FileSource{Path: write("split.arrow", rec.Schema(), parts...)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tp.Name, split.Name = "", ""
	if diff := cmp.Diff(split, tp, cmpopts.IgnoreUnexported(ValueCount{})); diff != "" {
		t.Errorf("one batch of %d rows vs batches of %d (-split +whole):\n%s", rec.NumRows(), maxPartRows, diff)
	}
}
