package profiler

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"golang.org/x/text/encoding/charmap"
)

// CSVSniff is what sniffCSV found about a delimited text file.
type CSVSniff struct {
	Delimiter byte
	Header    bool
	Columns   []string
	Encoding  string
	// Preamble counts the lines above the table (a title, an export
	// note), which the reader skips.
	Preamble int
}

const sniffBytes = 64 << 10

// sniffCSV inspects the start of a text stream: binary content, encoding,
// delimiter and header. The returned reader yields UTF-8 text without BOM.
func sniffCSV(r io.Reader, tsvHint bool) (io.Reader, CSVSniff, error) {
	br := bufio.NewReaderSize(r, sniffBytes)
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, CSVSniff{}, fmt.Errorf("profiler: reading input: %w", err)
	}
	var s CSVSniff
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, s, errors.New("profiler: the file is empty; nothing to profile")
	}
	var src io.Reader = br
	s.Encoding = "utf-8"
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		br.Discard(3)
		head = head[3:]
		s.Encoding = "utf-8 (BOM)"
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return nil, s, errors.New("profiler: the file is UTF-16 encoded; convert it to UTF-8 and profile again")
	}
	if bytes.IndexByte(head, 0) >= 0 || controlShare(head) > 0.01 {
		return nil, s, errors.New("profiler: the file looks binary, not delimited text; check the path or pass the right format (parquet, arrow)")
	}
	if !validUTF8Prefix(head) {
		if undefined1252(head) {
			return nil, s, errors.New("profiler: the file is neither UTF-8 nor Windows-1252 text; convert it to UTF-8 and profile again")
		}
		s.Encoding = "windows-1252 (decoded)"
		src = charmap.Windows1252.NewDecoder().Reader(br)
		head, _ = charmap.Windows1252.NewDecoder().Bytes(head)
	}
	// The reader ends a record at a bare CR as at LF ("CSV (Macintosh)"
	// files end every line so); encoding/csv and sniffDelimiter do not.
	head = bareCRToLF(head)
	s.Delimiter = sniffDelimiter(head, tsvHint)
	cr := csv.NewReader(bytes.NewReader(head))
	cr.Comma = rune(s.Delimiter)
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	var recs [][]string
	for len(recs) < 50 {
		rec, err := cr.Read()
		if err != nil {
			break
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return nil, s, errors.New("profiler: no complete line in the first 64 KiB; is this a delimited text file?")
	}
	s.Preamble = preamble(recs)
	recs = recs[s.Preamble:]
	if len(recs[0]) > MaxColumns {
		return nil, s, errTooManyColumns
	}
	s.Header = looksHeader(recs)
	if s.Header {
		s.Columns = uniqueNames(recs[0])
	} else {
		s.Columns = uniqueNames(make([]string, len(recs[0])))
	}
	return src, s, nil
}

// bareCRToLF returns b with each CR not followed by LF made an LF (a
// copy when there is one).
func bareCRToLF(b []byte) []byte {
	var out []byte
	for i, c := range b {
		if c == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			if out == nil {
				out = bytes.Clone(b)
			}
			out[i] = '\n'
		}
	}
	if out == nil {
		return b
	}
	return out
}

// maxPreamble is the most lines preamble takes for a title above a table.
const maxPreamble = 10

// preamble returns how many leading records are a title or notes above
// the table, as spreadsheets export them ("Sales report,,,", "Generated:
// 2026-12-01", "Sales", a blank row): records with no non-empty field, or
// one that is not a number and reads as a phrase (a space or ':' inside,
// or a leading '#') or stands alone on its line, followed by at least two
// records, the first with two non-empty fields or more. A one-word first
// field beside empty ones ("name,,") may be a header whose other columns
// have no name, so it ends the search, as does a table of one column.
func preamble(recs [][]string) int {
	filled := func(r []string) (n int, last string) {
		for _, f := range r {
			if f = strings.TrimSpace(f); f != "" {
				n, last = n+1, f
			}
		}
		return n, last
	}
	for k, r := range recs {
		n, v := filled(r)
		if n >= 2 {
			if k > maxPreamble || len(recs)-k < 2 {
				return 0
			}
			return k
		}
		if n == 1 && (cellKind(v).number() || len(r) > 1 && !strings.ContainsAny(v, " :") && !strings.HasPrefix(v, "#")) {
			return 0
		}
	}
	return 0
}

func controlShare(b []byte) float64 {
	n := 0
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			n++
		}
	}
	return float64(n) / float64(len(b)+1)
}

// validUTF8Prefix allows a truncated rune at the end of the window.
func validUTF8Prefix(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	for i := 1; i < 4 && i < len(b); i++ {
		if utf8.Valid(b[:len(b)-i]) {
			return true
		}
	}
	return false
}

// sniffDelimiter picks, among , \t ; |, the delimiter whose count per line
// (outside quotes) is most consistent and non-zero over the first lines.
func sniffDelimiter(head []byte, tsvHint bool) byte {
	cands := []byte{',', '\t', ';', '|'}
	if tsvHint {
		cands = []byte{'\t', ',', ';', '|'}
	}
	var lines [][4]int
	var cur [4]int
	inQ := false
	for _, c := range head {
		if c == '"' {
			inQ = !inQ
		}
		if inQ {
			continue
		}
		if c == '\n' {
			lines = append(lines, cur)
			cur = [4]int{}
			if len(lines) == 30 {
				break
			}
			continue
		}
		for i, d := range cands {
			if c == d {
				cur[i]++
			}
		}
	}
	if len(lines) == 0 {
		lines = append(lines, cur)
	}
	best, bestScore := cands[0], -1.0
	for i, d := range cands {
		freq := map[int]int{}
		for _, l := range lines {
			freq[l[i]]++
		}
		mode, modeN := 0, 0
		for v, n := range freq {
			if n > modeN || n == modeN && v > mode {
				mode, modeN = v, n
			}
		}
		if mode == 0 {
			continue
		}
		score := float64(modeN)/float64(len(lines))*1000 + float64(mode)
		if score > bestScore {
			best, bestScore = d, score
		}
	}
	return best
}

func cellKind(s string) kind {
	s = trimSpace(s)
	if s == "" || isNullToken(s) {
		return nKinds
	}
	c := newColAcc("", 1)
	return c.classify(s)
}

// looksHeader decides whether the first record names the columns.
func looksHeader(recs [][]string) bool {
	first := recs[0]
	for _, f := range first {
		if k := cellKind(f); k.number() || k == kDate {
			return false
		}
		if c := findSensitive(f); c != ClassNone && c != ClassName {
			return false // data such as an email or a token, not a name
		}
	}
	if len(recs) == 1 {
		return true
	}
	for ci, f := range first {
		repeated, typed := false, false
		for _, r := range recs[1:] {
			if ci >= len(r) {
				continue
			}
			if trimSpace(r[ci]) == trimSpace(f) && f != "" {
				repeated = true
			}
			if k := cellKind(r[ci]); k.number() || k == kDate {
				typed = true
			}
		}
		if typed || !repeated {
			continue
		}
		return false
	}
	// all text columns: header if its values never repeat below it
	return true
}

func uniqueNames(in []string) []string {
	out := make([]string, len(in))
	seen := map[string]int{}
	for i, n := range in {
		n = trimSpace(n)
		if n == "" {
			n = "column_" + strconv.Itoa(i+1)
		}
		if k := seen[n]; k > 0 {
			seen[n]++
			n = n + "_" + strconv.Itoa(k+1)
		}
		seen[n]++
		out[i] = n
	}
	return out
}

// csvReader is a streaming CSV parser producing Arrow record batches of
// string columns. It never holds more than one batch and one read buffer,
// so a huge field is truncated (with a warning) instead of growing memory.
type csvReader struct {
	r        io.Reader
	buf      []byte
	pos, end int
	eof      bool
	delim    byte
	special  [256]bool // bytes that end an unquoted run: delimiter, CR, LF, quote
	names    []string
	schema   *arrow.Schema
	maxField int

	// record state
	col        int
	inQuote    bool
	afterQuote bool
	skipLF     bool
	fieldLen   int
	fieldQuot  bool
	fieldTrunc bool
	skip       int // records still to skip: the preamble and the header

	b strBatch // the batch being read; missing fields are its nulls

	rec arrow.RecordBatch
	err error

	// warnings
	long, short, truncated, badQuote, badUTF8 int64
}

func newCSVReader(r io.Reader, s CSVSniff, maxField int) *csvReader {
	fields := make([]arrow.Field, len(s.Columns))
	for i, n := range s.Columns {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	c := &csvReader{r: r, buf: make([]byte, 1<<20), delim: s.Delimiter, names: s.Columns,
		schema: arrow.NewSchema(fields, nil), maxField: maxField, skip: s.Preamble}
	if s.Header {
		c.skip++
	}
	c.special[c.delim], c.special['\n'], c.special['\r'], c.special['"'] = true, true, true, true
	c.b.widen(len(s.Columns))
	return c
}

func (c *csvReader) appendField(b []byte) {
	if c.col >= len(c.names) || len(b) == 0 {
		return
	}
	if c.fieldLen+len(b) > c.maxField {
		if !c.fieldTrunc {
			c.fieldTrunc = true
			c.truncated++
		}
		b = b[:max(c.maxField-c.fieldLen, 0)]
	}
	c.fieldLen += len(b)
	// A field comes in pieces (quotes, buffer ends), so it is appended
	// here and ended by endField.
	col := c.b.open(c.col)
	col.data = append(col.data, b...)
	c.b.data += len(b)
}

func (c *csvReader) endField() {
	if c.col < len(c.names) {
		col := c.b.open(c.col)
		col.offs = append(col.offs, int32(len(col.data)))
		if col.valid != nil {
			col.setValid(len(col.offs) - 2)
		}
	}
	c.col++
	c.fieldLen = 0
	c.fieldQuot = false
	c.fieldTrunc = false
}

// endRecord closes a record; it reports whether a batch is ready. A
// record with fewer fields than the header leaves the rest null.
func (c *csvReader) endRecord() bool {
	if c.col == 0 && c.fieldLen == 0 && !c.fieldQuot {
		return false // a blank line
	}
	c.endField()
	if c.col > len(c.names) {
		c.long++
	}
	if c.col < len(c.names) {
		c.short++
	}
	c.col = 0
	if c.skip > 0 {
		c.skip--
		c.b.discard()
		c.long, c.short = 0, 0
		return false
	}
	c.b.endRow()
	return c.b.rows >= batchRows || c.b.size(len(c.names)) >= batchBytes
}

func (c *csvReader) fill() bool {
	if c.eof {
		return false
	}
	c.pos = 0
	n, err := io.ReadFull(c.r, c.buf)
	c.end = n
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			c.eof = true
		} else {
			c.err = fmt.Errorf("profiler: reading input: %w", err)
			return false
		}
	}
	return n > 0
}

func (c *csvReader) parse() (ready bool) {
	for {
		if c.pos >= c.end && !c.fill() {
			// end of input: close an unterminated last record
			if c.inQuote {
				c.badQuote++
				c.inQuote = false
			}
			if c.col > 0 || c.fieldLen > 0 || c.fieldQuot || c.afterQuote {
				c.afterQuote = false
				c.endRecord()
			}
			return c.b.rows > 0
		}
		buf := c.buf[:c.end]
		for c.pos < len(buf) {
			if c.skipLF {
				c.skipLF = false
				if buf[c.pos] == '\n' {
					c.pos++
					continue
				}
			}
			if c.inQuote {
				i := bytes.IndexByte(buf[c.pos:], '"')
				if i < 0 {
					c.appendField(buf[c.pos:])
					c.pos = len(buf)
					break
				}
				c.appendField(buf[c.pos : c.pos+i])
				c.pos += i + 1
				c.inQuote, c.afterQuote = false, true
				continue
			}
			if c.afterQuote {
				c.afterQuote = false
				if buf[c.pos] == '"' {
					c.appendField(buf[c.pos : c.pos+1])
					c.pos++
					c.inQuote = true
					continue
				}
				if b := buf[c.pos]; b != c.delim && b != '\n' && b != '\r' {
					c.badQuote++
				}
			}
			start := c.pos
			d := c.delim
			p := c.pos
			sp := &c.special
			for p < len(buf) && !sp[buf[p]] {
				p++
			}
			c.appendField(buf[start:p])
			c.pos = p
			if p == len(buf) {
				break
			}
			b := buf[p]
			c.pos++
			switch b {
			case d:
				c.endField()
			case '\n', '\r':
				c.skipLF = b == '\r'
				if c.endRecord() {
					return true
				}
			case '"':
				if c.fieldLen == 0 && !c.fieldQuot {
					c.inQuote, c.fieldQuot = true, true
				} else {
					c.badQuote++
					c.appendField([]byte{'"'})
				}
			}
		}
	}
}

func (c *csvReader) Next() bool {
	if c.rec != nil {
		c.rec.Release()
		c.rec = nil
	}
	if c.err != nil || !c.parse() {
		return false
	}
	if c.err != nil {
		return false
	}
	rec, bad := c.b.build(c.schema, true)
	c.rec = rec
	c.badUTF8 += int64(bad)
	return true
}

func fixUTF8(data []byte, offs []int32) ([]byte, []int32) {
	out := make([]byte, 0, len(data))
	no := make([]int32, len(offs))
	for i := 1; i < len(offs); i++ {
		out = append(out, bytes.ToValidUTF8(data[offs[i-1]:offs[i]], []byte("\uFFFD"))...)
		no[i] = int32(len(out))
	}
	return out, no
}

func (c *csvReader) warningList() []string {
	var w []string
	add := func(n int64, f string) {
		if n > 0 {
			w = append(w, fmt.Sprintf(f, n))
		}
	}
	add(c.long, "%d rows had more fields than the header (extra fields ignored)")
	add(c.short, "%d rows had fewer fields than the header (missing fields counted as nulls)")
	add(c.truncated, "%d fields exceeded the field size limit and were truncated")
	add(c.badQuote, "%d malformed quotes (stray or unterminated quote characters)")
	add(c.badUTF8, "%d batches contained invalid UTF-8 (replaced with U+FFFD)")
	return w
}

func (c *csvReader) RecordBatch() arrow.RecordBatch { return c.rec }
func (c *csvReader) Schema() *arrow.Schema          { return c.schema }
func (c *csvReader) Err() error                     { return c.err }
func (c *csvReader) Release() {
	if c.rec != nil {
		c.rec.Release()
		c.rec = nil
	}
}

var _ = strings.TrimSpace

// undefined1252 reports bytes that Windows-1252 leaves undefined.
func undefined1252(b []byte) bool {
	for _, c := range b {
		switch c {
		case 0x81, 0x8d, 0x8f, 0x90, 0x9d:
			return true
		}
	}
	return false
}
