package ipcmeta

import "encoding/binary"

// buffer is one flatbuffer. Its methods read tables, vectors and scalars
// only after checking that they lie inside it.
type buffer []byte

// table is a table's position in its buffer.
type table int

// at returns the n bytes at pos, or an error when they leave the buffer.
func (b buffer) at(pos, n int) ([]byte, error) {
	if pos < 0 || n < 0 || pos > len(b) || n > len(b)-pos {
		return nil, malformed("%d bytes at %d outside a buffer of %d", n, pos, len(b))
	}
	return b[pos : pos+n], nil
}

func (b buffer) uint32At(pos int) (int, error) {
	w, err := b.at(pos, 4)
	if err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint32(w)), nil
}

// follow reads the unsigned offset at pos and returns where it points.
func (b buffer) follow(pos int) (int, error) {
	off, err := b.uint32At(pos)
	if err != nil {
		return 0, err
	}
	if off > len(b)-pos {
		return 0, malformed("an offset at %d points outside the buffer", pos)
	}
	return pos + off, nil
}

func (b buffer) root() (table, error) {
	pos, err := b.follow(0)
	if err != nil {
		return 0, err
	}
	return b.table(pos)
}

// table checks the table at pos: its vtable and its inline size lie in
// the buffer.
func (b buffer) table(pos int) (table, error) {
	w, err := b.at(pos, 4)
	if err != nil {
		return 0, err
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(w)))
	head, err := b.at(vt, 4)
	if err != nil {
		return 0, err
	}
	vtSize := int(binary.LittleEndian.Uint16(head))
	inline := int(binary.LittleEndian.Uint16(head[2:]))
	if vtSize < 4 || vtSize%2 != 0 {
		return 0, malformed("a vtable of %d bytes at %d", vtSize, vt)
	}
	if _, err := b.at(vt, vtSize); err != nil {
		return 0, err
	}
	if _, err := b.at(pos, inline); err != nil {
		return 0, err
	}
	return table(pos), nil
}

// field returns the position of slot's value in t, or 0 if t lacks it.
// t's vtable was checked when t was read.
func (b buffer) field(t table, slot int) int {
	vt := int(t) - int(int32(binary.LittleEndian.Uint32(b[t:])))
	vtSize := int(binary.LittleEndian.Uint16(b[vt:]))
	entry := 4 + 2*slot
	if entry+2 > vtSize {
		return 0
	}
	off := int(binary.LittleEndian.Uint16(b[vt+entry:]))
	if off == 0 {
		return 0
	}
	return int(t) + off
}

// scalar returns the n bytes of slot's value in t, nil if t lacks it.
func (b buffer) scalar(t table, slot, n int) ([]byte, error) {
	pos := b.field(t, slot)
	if pos == 0 {
		return nil, nil
	}
	return b.at(pos, n)
}

func (b buffer) uint8Field(t table, slot int) (uint8, error) {
	v, err := b.scalar(t, slot, 1)
	if err != nil || v == nil {
		return 0, err
	}
	return v[0], nil
}

func (b buffer) int64Field(t table, slot int) (int64, error) {
	v, err := b.scalar(t, slot, 8)
	if err != nil || v == nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(v)), nil
}

// tableField returns the table slot of t points to, ok false if t lacks it.
func (b buffer) tableField(t table, slot int) (_ table, ok bool, err error) {
	pos := b.field(t, slot)
	if pos == 0 {
		return 0, false, nil
	}
	target, err := b.follow(pos)
	if err != nil {
		return 0, false, err
	}
	sub, err := b.table(target)
	return sub, err == nil, err
}

// vectorField returns where the elements of slot's vector in t start and
// how many there are, once they are known to fit in the buffer at elem
// bytes each. A missing vector is empty.
func (b buffer) vectorField(t table, slot, elem int) (start, count int, err error) {
	pos := b.field(t, slot)
	if pos == 0 {
		return 0, 0, nil
	}
	vec, err := b.follow(pos)
	if err != nil {
		return 0, 0, err
	}
	count, err = b.uint32At(vec)
	if err != nil {
		return 0, 0, err
	}
	start = vec + 4
	if count > (len(b)-start)/elem {
		return 0, 0, malformed("a vector of %d elements of %d bytes at %d outside a buffer of %d", count, elem, vec, len(b))
	}
	return start, count, nil
}

// eachTable calls check with each table of slot's vector of tables in t,
// stopping at its first error.
func (b buffer) eachTable(t table, slot int, check func(table) error) error {
	start, count, err := b.vectorField(t, slot, 4)
	if err != nil {
		return err
	}
	for i := range count {
		pos, err := b.follow(start + 4*i)
		if err != nil {
			return err
		}
		sub, err := b.table(pos)
		if err != nil {
			return err
		}
		if err := check(sub); err != nil {
			return err
		}
	}
	return nil
}

// keyValues checks slot's vector of KeyValue tables in t: at most
// MaxFields of them, each a key and a value string.
func (b buffer) keyValues(t table, slot int) error {
	if _, count, err := b.vectorField(t, slot, 4); err != nil {
		return err
	} else if count > MaxFields {
		return malformed("%d metadata entries, more than %d", count, MaxFields)
	}
	return b.eachTable(t, slot, func(kv table) error {
		for s := range 2 {
			if _, _, err := b.vectorField(kv, s, 1); err != nil {
				return err
			}
		}
		return nil
	})
}

// schema checks a Schema table: its fields, at every level, and its
// metadata and features.
func (b buffer) schema(s table) error {
	if err := b.keyValues(s, 2); err != nil {
		return err
	}
	if _, _, err := b.vectorField(s, 3, 8); err != nil {
		return err
	}
	seen := 0
	return b.eachTable(s, 1, func(f table) error { return b.checkField(f, 1, &seen) })
}

// checkField checks a Field table at depth and its children, counting
// every field in seen.
func (b buffer) checkField(f table, depth int, seen *int) error {
	*seen++
	if depth > MaxDepth || *seen > MaxFields {
		return malformed("fields nest more than %d deep or number more than %d", MaxDepth, MaxFields)
	}
	if _, _, err := b.vectorField(f, 0, 1); err != nil { // name
		return err
	}
	if err := b.keyValues(f, 6); err != nil {
		return err
	}
	kind, err := b.uint8Field(f, 2)
	if err != nil {
		return err
	}
	if typ, ok, err := b.tableField(f, 3); err != nil {
		return err
	} else if ok && kind == typeUnion {
		if _, _, err := b.vectorField(typ, 1, 4); err != nil { // typeIds
			return err
		}
	}
	if dict, ok, err := b.tableField(f, 4); err != nil {
		return err
	} else if ok {
		if _, _, err := b.tableField(dict, 1); err != nil { // indexType
			return err
		}
	}
	return b.eachTable(f, 5, func(c table) error { return b.checkField(c, depth+1, seen) })
}

// recordBatch checks a RecordBatch table: it has at most MaxRows rows,
// its nodes and buffers fit, and its variadic buffer counts name no more
// buffers than it has.
func (b buffer) recordBatch(rb table) error {
	rows, err := b.int64Field(rb, 0)
	if err != nil {
		return err
	}
	if rows < 0 || rows > MaxRows {
		return malformed("a record batch of %d rows, outside [0, %d]", rows, MaxRows)
	}
	if _, _, err := b.vectorField(rb, 1, 16); err != nil { // nodes
		return err
	}
	_, buffers, err := b.vectorField(rb, 2, 16)
	if err != nil {
		return err
	}
	if _, _, err := b.tableField(rb, 3); err != nil { // compression
		return err
	}
	start, count, err := b.vectorField(rb, 4, 8)
	if err != nil {
		return err
	}
	total := 0
	for i := range count {
		n := int64(binary.LittleEndian.Uint64(b[start+8*i:]))
		if n < 0 || n > int64(buffers-total) {
			return malformed("variadic buffer counts name more than the batch's %d buffers", buffers)
		}
		total += int(n)
	}
	return nil
}
