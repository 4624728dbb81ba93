package profiler

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
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

// FuzzProfile_Parquet profiles any bytes as a Parquet file: a malformed
// file is an error, never a crash of the process. The reader's own
// goroutines once panicked on a dictionary page header missing from a
// page (testdata/fuzz), which no recover in the caller could catch.
//
// Malformed metadata can still make arrow-go allocate without bound,
// which is fatal rather than a panic; only reading such files in a
// process of their own would contain that.
func FuzzProfile_Parquet(f *testing.F) {
	f.Add(parquetFile(f))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "x.parquet")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = Profile(context.Background(), FileSource{Path: p}, nil)
	})
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
