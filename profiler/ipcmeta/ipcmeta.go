// Package ipcmeta checks the metadata of an Arrow IPC file or stream
// before arrow-go reads it.
//
// arrow-go trusts the counts a file claims: it makes a slice as long as a
// schema's claimed number of fields or children, or a record batch's
// claimed number of variadic buffers, and it follows a field's children
// wherever they point, so a field that is its own child recurses without
// end. Each is fatal to the process (out of memory, stack overflow), not
// a panic a caller could recover. Check refuses such metadata: every
// vector must fit in the message that holds it, fields nest at most
// MaxDepth deep and number at most MaxFields, a record batch has at most
// MaxRows rows, and every message lies within the file, a file's blocks
// holding no more than it together.
//
// Check reads only metadata (flatbuffers), never record bodies; the sizes
// of bodies and of decompressed buffers are left to the reader's limits
// and allocator.
package ipcmeta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Limits on a schema's fields, counted over every nesting level.
const (
	MaxDepth  = 64
	MaxFields = 1 << 16
)

// MaxRows is the most rows a record batch may have: the bound Arrow's
// format documents for portable files. A batch of columns without
// buffers (all-null) can claim any number of rows in a few bytes.
const MaxRows = 1<<31 - 1

// MaxMetadata is the longest message metadata or footer Check reads. A
// schema or record batch of a thousand columns takes some hundred KiB.
const MaxMetadata = 16 << 20

// magic opens and ends an Arrow IPC file.
const magic = "ARROW1"

// continuation marks a message's length in the current IPC format.
const continuation = 0xFFFFFFFF

// Message header types (Message.fbs).
const (
	headerSchema     = 1
	headerDictionary = 2
	headerRecord     = 3
)

// typeUnion is the Union member of the Type union (Schema.fbs).
const typeUnion = 14

// ErrMalformed wraps every refusal of Check.
var ErrMalformed = errors.New("malformed Arrow IPC metadata")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// Check checks the metadata of the Arrow IPC data of size bytes read
// through r: the footer and every block of a file (data that starts with
// "ARROW1"), every message of a stream.
func Check(r io.ReaderAt, size int64) error {
	head := make([]byte, len(magic))
	if size >= int64(len(magic)) {
		if _, err := r.ReadAt(head, 0); err != nil {
			return fmt.Errorf("reading the start: %w", err)
		}
	}
	if string(head) == magic {
		return checkFile(r, size)
	}
	return checkStream(r, 0, size)
}

// checkStream checks the messages from offset on until the end marker or
// the end of the data.
func checkStream(r io.ReaderAt, offset, size int64) error {
	for offset < size {
		meta, next, err := readMessage(r, offset, size)
		if err != nil || meta == nil {
			return err
		}
		body, err := checkMessage(meta)
		if err != nil {
			return err
		}
		if body > size-next {
			return malformed("a message body of %d bytes at offset %d runs past the end", body, next)
		}
		offset = next + body
	}
	return nil
}

// readMessage reads the message metadata at offset: a continuation
// marker (or, in the old format, none), a length, and a flatbuffer. It
// returns a nil buffer at the end-of-stream marker, and the offset after
// the metadata.
func readMessage(r io.ReaderAt, offset, size int64) (meta []byte, next int64, err error) {
	word := make([]byte, 4)
	read := func() (uint32, error) {
		if size-offset < 4 {
			return 0, malformed("a message prefix runs past the end at offset %d", offset)
		}
		if _, err := r.ReadAt(word, offset); err != nil {
			return 0, fmt.Errorf("reading at offset %d: %w", offset, err)
		}
		offset += 4
		return binary.LittleEndian.Uint32(word), nil
	}
	n, err := read()
	if err != nil {
		return nil, 0, err
	}
	if n == continuation {
		if n, err = read(); err != nil {
			return nil, 0, err
		}
	}
	if n == 0 {
		return nil, offset, nil
	}
	switch {
	case n < 4 || n > MaxMetadata:
		return nil, 0, malformed("message metadata of %d bytes at offset %d, outside [4, %d]", n, offset, MaxMetadata)
	case int64(n) > size-offset:
		return nil, 0, malformed("message metadata of %d bytes at offset %d runs past the end", n, offset)
	}
	meta = make([]byte, n)
	if _, err := r.ReadAt(meta, offset); err != nil {
		return nil, 0, fmt.Errorf("reading at offset %d: %w", offset, err)
	}
	return meta, offset + int64(n), nil
}

// checkMessage checks one message's flatbuffer and returns the body
// length it claims.
func checkMessage(meta []byte) (int64, error) {
	fb := buffer(meta)
	msg, err := fb.root()
	if err != nil {
		return 0, err
	}
	if err := fb.keyValues(msg, 4); err != nil {
		return 0, err
	}
	body, err := fb.int64Field(msg, 3)
	if err != nil {
		return 0, err
	}
	if body < 0 {
		return 0, malformed("negative body length %d", body)
	}
	kind, err := fb.uint8Field(msg, 1)
	if err != nil {
		return 0, err
	}
	header, ok, err := fb.tableField(msg, 2)
	if err != nil || !ok {
		return body, err
	}
	switch kind {
	case headerSchema:
		return body, fb.schema(header)
	case headerDictionary:
		data, ok, err := fb.tableField(header, 1)
		if err != nil || !ok {
			return body, err
		}
		return body, fb.recordBatch(data)
	case headerRecord:
		return body, fb.recordBatch(header)
	}
	return body, nil
}

// checkFile checks a file's footer (its schema and blocks) and the
// message of every block.
func checkFile(r io.ReaderAt, size int64) error {
	end := size - int64(len(magic)) - 4
	if end < int64(len(magic)) {
		return malformed("a file of %d bytes", size)
	}
	tail := make([]byte, 4+len(magic))
	if _, err := r.ReadAt(tail, end); err != nil {
		return fmt.Errorf("reading the footer length: %w", err)
	}
	if string(tail[4:]) != magic {
		return malformed("the file does not end with %q", magic)
	}
	n := int64(binary.LittleEndian.Uint32(tail))
	if n <= 0 || n > MaxMetadata || n > end-int64(len(magic)) {
		return malformed("a footer of %d bytes", n)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, end-n); err != nil {
		return fmt.Errorf("reading the footer: %w", err)
	}
	fb := buffer(footer)
	root, err := fb.root()
	if err != nil {
		return err
	}
	if err := fb.keyValues(root, 4); err != nil {
		return err
	}
	if schema, ok, err := fb.tableField(root, 1); err != nil {
		return err
	} else if ok {
		if err := fb.schema(schema); err != nil {
			return err
		}
	}
	const blockSize = 24 // offset int64, metadata length int32 (padded), body length int64
	// Blocks do not overlap, so together they hold at most the file: a
	// footer naming one block a million times would have Check, and then
	// the reader, read it a million times.
	var held int64
	for _, slot := range []int{2, 3} {
		start, count, err := fb.vectorField(root, slot, blockSize)
		if err != nil {
			return err
		}
		for i := range count {
			b := footer[start+i*blockSize:]
			offset := int64(binary.LittleEndian.Uint64(b))
			metaLen := int64(int32(binary.LittleEndian.Uint32(b[8:])))
			bodyLen := int64(binary.LittleEndian.Uint64(b[16:]))
			if offset < 0 || metaLen <= 0 || bodyLen < 0 || offset > size || metaLen > size-offset || bodyLen > size-offset-metaLen {
				return malformed("block %d lies outside the file", i)
			}
			if held += metaLen + bodyLen; held > size {
				return malformed("the blocks hold more than the file's %d bytes", size)
			}
			meta, _, err := readMessage(r, offset, offset+metaLen)
			if err != nil {
				return err
			}
			if meta == nil {
				return malformed("block %d holds no message", i)
			}
			if _, err := checkMessage(meta); err != nil {
				return err
			}
		}
	}
	return nil
}
