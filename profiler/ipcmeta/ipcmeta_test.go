package ipcmeta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
)

// wideRecord holds a column of each kind whose metadata differs: nested
// (list, struct, map), dictionary-encoded, a union, a view type with
// variadic buffers, and schema and field metadata.
func wideRecord(tb testing.TB) arrow.RecordBatch {
	tb.Helper()
	md := arrow.NewMetadata([]string{"origin"}, []string{"test"})
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: md},
		{Name: "view", Type: arrow.BinaryTypes.StringView},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String)},
		{Name: "pair", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String})},
		{Name: "attrs", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)},
		{Name: "kind", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}},
		{Name: "either", Type: arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int32}, {Name: "s", Type: arrow.BinaryTypes.String}}, []arrow.UnionTypeCode{0, 1})},
	}
	schema := arrow.NewSchema(fields, &md)
	cols := []string{
		`[1, 2, 3]`,
		`["short", "a value longer than twelve bytes", null]`,
		`[["x"], [], ["y", "z"]]`,
		`[{"a": 1, "b": "p"}, {"a": 2, "b": "q"}, null]`,
		`[[{"key": "k", "value": 1}], [], null]`,
		`["a", "b", "a"]`,
		`[[0, 5], [1, "s"], [0, 7]]`,
	}
	arrs := make([]arrow.Array, len(fields))
	for i, f := range fields {
		a, _, err := array.FromJSON(memory.DefaultAllocator, f.Type, strings.NewReader(cols[i]))
		if err != nil {
			tb.Fatalf("column %s: %v", f.Name, err)
		}
		arrs[i] = a
	}
	return array.NewRecordBatch(schema, arrs, 3)
}

// written returns rec written as an Arrow IPC file and as a stream.
func written(tb testing.TB, rec arrow.RecordBatch, opts ...ipc.Option) (file, stream []byte) {
	tb.Helper()
	opts = append(opts, ipc.WithSchema(rec.Schema()))
	var fb, sb bytes.Buffer
	fw, err := ipc.NewFileWriter(&fb, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	sw := ipc.NewWriter(&sb, opts...)
	for _, w := range []interface {
		Write(arrow.RecordBatch) error
		Close() error
	}{fw, sw} {
		for range 2 {
			if err := w.Write(rec); err != nil {
				tb.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return fb.Bytes(), sb.Bytes()
}

func check(data []byte) error { return Check(bytes.NewReader(data), int64(len(data))) }

func TestCheck_Valid(t *testing.T) {
	rec := wideRecord(t)
	for _, tc := range []struct {
		name string
		opts []ipc.Option
	}{
		{"plain", nil},
		{"lz4", []ipc.Option{ipc.WithLZ4()}},
		{"zstd", []ipc.Option{ipc.WithZstd()}},
	} {
		file, stream := written(t, rec, tc.opts...)
		for kind, data := range map[string][]byte{"file": file, "stream": stream} {
			if err := check(data); err != nil {
				t.Errorf("%s %s: %v", tc.name, kind, err)
			}
		}
	}
	if err := check(nil); err != nil {
		t.Errorf("empty stream: %v", err)
	}
}

// message frames a Message flatbuffer of the given header and body as a
// stream message.
func message(b *flatbuffers.Builder, headerType byte, header flatbuffers.UOffsetT, body []byte) []byte {
	b.StartObject(5)
	b.PrependInt16Slot(0, 4, 0) // V5
	b.PrependByteSlot(1, headerType, 0)
	b.PrependUOffsetTSlot(2, header, 0)
	b.PrependInt64Slot(3, int64(len(body)), 0)
	b.Finish(b.EndObject())
	meta := b.FinishedBytes()
	for len(meta)%8 != 0 {
		meta = append(meta, 0)
	}
	out := binary.LittleEndian.AppendUint32(nil, continuation)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(meta)))
	out = append(out, meta...)
	return append(out, body...)
}

func offsets(b *flatbuffers.Builder, offs []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	b.StartVector(4, len(offs), 4)
	for i := len(offs) - 1; i >= 0; i-- {
		b.PrependUOffsetT(offs[i])
	}
	return b.EndVector(len(offs))
}

// structField builds a Field of type Struct_ with the given children.
func structField(b *flatbuffers.Builder, name string, children []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	n := b.CreateString(name)
	b.StartObject(0)
	typ := b.EndObject()
	kids := offsets(b, children)
	b.StartObject(7)
	b.PrependUOffsetTSlot(0, n, 0)
	b.PrependByteSlot(2, 13, 0) // Struct_
	b.PrependUOffsetTSlot(3, typ, 0)
	b.PrependUOffsetTSlot(5, kids, 0)
	return b.EndObject()
}

func schemaMessage(b *flatbuffers.Builder, fields ...flatbuffers.UOffsetT) []byte {
	fs := offsets(b, fields)
	b.StartObject(4)
	b.PrependUOffsetTSlot(1, fs, 0)
	return message(b, headerSchema, b.EndObject(), nil)
}

// recordMessage builds a RecordBatch of the given rows, number of
// buffers and variadic buffer counts.
func recordMessage(b *flatbuffers.Builder, rows int64, buffers int, variadic []int64) []byte {
	b.StartVector(8, len(variadic), 8)
	for i := len(variadic) - 1; i >= 0; i-- {
		b.PrependInt64(variadic[i])
	}
	vc := b.EndVector(len(variadic))
	b.StartVector(16, buffers, 8)
	for range buffers {
		b.PrependInt64(0) // length
		b.PrependInt64(0) // offset
	}
	bufs := b.EndVector(buffers)
	b.StartObject(5)
	b.PrependInt64Slot(0, rows, 0)
	b.PrependUOffsetTSlot(2, bufs, 0)
	b.PrependUOffsetTSlot(4, vc, 0)
	return message(b, headerRecord, b.EndObject(), nil)
}

// chain nests depth struct fields, each the only child of the one above.
func chain(b *flatbuffers.Builder, depth int) flatbuffers.UOffsetT {
	f := structField(b, "leaf", nil)
	for range depth - 1 {
		f = structField(b, "f", []flatbuffers.UOffsetT{f})
	}
	return f
}

// shared nests depth struct fields, each holding the one below twice: a
// few hundred bytes that name 2^depth fields.
func shared(b *flatbuffers.Builder, depth int) flatbuffers.UOffsetT {
	f := structField(b, "leaf", nil)
	for range depth - 1 {
		f = structField(b, "f", []flatbuffers.UOffsetT{f, f})
	}
	return f
}

func TestCheck_Refuses(t *testing.T) {
	file, stream := written(t, wideRecord(t))
	builder := func() *flatbuffers.Builder { return flatbuffers.NewBuilder(256) }
	eos := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, continuation), 0)

	patched := func(data []byte, at int, v uint32) []byte {
		out := bytes.Clone(data)
		binary.LittleEndian.PutUint32(out[at:], v)
		return out
	}
	// The children vector of a two-level schema, and its length.
	hugeChildren := func() []byte {
		b := builder()
		leaf := structField(b, "leaf", nil)
		n := b.CreateString("top")
		b.StartObject(0)
		typ := b.EndObject()
		kids := offsets(b, []flatbuffers.UOffsetT{leaf})
		b.StartObject(7)
		b.PrependUOffsetTSlot(0, n, 0)
		b.PrependByteSlot(2, 13, 0)
		b.PrependUOffsetTSlot(3, typ, 0)
		b.PrependUOffsetTSlot(5, kids, 0)
		top := b.EndObject()
		msg := schemaMessage(b, top)
		// The vector's length sits len(FinishedBytes)-kids bytes into the
		// flatbuffer, which starts after the 8-byte prefix.
		at := 8 + len(b.FinishedBytes()) - int(kids)
		if binary.LittleEndian.Uint32(msg[at:]) != 1 {
			t.Fatal("test: the children vector is not where it was built")
		}
		return patched(msg, at, 0x7fffffff)
	}

	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"children vector longer than the message", "vector of 2147483647", append(hugeChildren(), eos...)},
		{"fields nested 65 deep", "nest more than 64", func() []byte { b := builder(); return append(schemaMessage(b, chain(b, 65)), eos...) }()},
		{"one field shared to name 2^30 fields", "number more than 65536", func() []byte { b := builder(); return append(schemaMessage(b, shared(b, 30)), eos...) }()},
		{"variadic buffers beyond the batch's", "variadic buffer counts", func() []byte {
			b := builder()
			return append(append(schemaMessage(b, structField(b, "x", nil)), recordMessage(builder(), 1, 3, []int64{2, 2})...), eos...)
		}()},
		{"negative variadic count", "variadic buffer counts", func() []byte {
			b := builder()
			return append(append(schemaMessage(b, structField(b, "x", nil)), recordMessage(builder(), 1, 3, []int64{-1})...), eos...)
		}()},
		{"a batch of 2^31 rows", "outside [0, 2147483647]", func() []byte {
			b := builder()
			return append(append(schemaMessage(b, structField(b, "x", nil)), recordMessage(builder(), 1<<31, 0, nil)...), eos...)
		}()},
		{"a batch of negative rows", "outside [0, 2147483647]", func() []byte {
			b := builder()
			return append(append(schemaMessage(b, structField(b, "x", nil)), recordMessage(builder(), -5, 0, nil)...), eos...)
		}()},
		{"stream message longer than the stream", "runs past the end", patched(stream, 4, 1<<20)},
		{"metadata beyond the bound", "outside [4, 16777216]", append(patched(stream, 4, MaxMetadata+8), make([]byte, MaxMetadata+16)...)},
		{"stream cut short", "runs past the end", stream[:len(stream)/2]},
		{"footer longer than the file", "a footer of", patched(file, len(file)-10, uint32(len(file)))},
		{"file cut short", "does not end with", file[:len(file)-1]},
		{"file of its magic only", "a file of", []byte("ARROW1")},
		{"one block listed 1,000 times", "the blocks hold more than", repeatedBlocks(t, 1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := check(tc.data)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v, want an ErrMalformed saying %q", err, tc.want)
			}
		})
	}
}

// TestCheck_ValidShapes: the messages built by hand in the refusals pass
// when they stay within the bounds, so each refusal is of its one fault.
func TestCheck_ValidShapes(t *testing.T) {
	builder := func() *flatbuffers.Builder { return flatbuffers.NewBuilder(256) }
	eos := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, continuation), 0)
	for name, data := range map[string][]byte{
		"fields nested 64 deep":                func() []byte { b := builder(); return append(schemaMessage(b, chain(b, 64)), eos...) }(),
		"one field shared to name 2^15 fields": func() []byte { b := builder(); return append(schemaMessage(b, shared(b, 15)), eos...) }(),
		"one block listed once":                repeatedBlocks(t, 1),
		"a batch of 2^31-1 rows": func() []byte {
			b := builder()
			return append(append(schemaMessage(b, structField(b, "x", nil)), recordMessage(builder(), 1<<31-1, 0, nil)...), eos...)
		}(),
		"variadic buffers within the batch's": func() []byte {
			b := builder()
			return append(append(schemaMessage(b, structField(b, "x", nil)), recordMessage(builder(), 1, 4, []int64{2, 2})...), eos...)
		}(),
	} {
		if err := check(data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzCheck: Check never panics, whatever it reads.
func FuzzCheck(f *testing.F) {
	file, stream := written(f, wideRecord(f))
	f.Add(file)
	f.Add(stream)
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = check(data)
	})
}

// repeatedBlocks builds an Arrow IPC file whose footer names its one
// record batch n times.
func repeatedBlocks(tb testing.TB, n int) []byte {
	tb.Helper()
	b := flatbuffers.NewBuilder(256)
	out := append([]byte(magic), 0, 0)
	out = append(out, schemaMessage(b, structField(b, "x", nil))...)
	offset := len(out)
	rec := recordMessage(flatbuffers.NewBuilder(256), 1, 0, nil)
	out = append(out, rec...)

	fb := flatbuffers.NewBuilder(256)
	fb.StartVector(24, n, 8)
	for range n {
		fb.PrependInt64(0) // body length
		fb.Pad(4)
		fb.PrependInt32(int32(len(rec)))
		fb.PrependInt64(int64(offset))
	}
	blocks := fb.EndVector(n)
	fb.StartObject(5)
	fb.PrependUOffsetTSlot(3, blocks, 0)
	fb.Finish(fb.EndObject())
	footer := fb.FinishedBytes()
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, magic...)
}
