package profiler

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/selmem/selmem/profiler/ipcmeta"
)

// Source is a tabular data source that can be read as Arrow record batches.
type Source interface {
	Open(ctx context.Context) (RecordReader, error)
}

// RecordReader streams Arrow record batches. The batch returned by
// RecordBatch is valid until the next call to Next (Retain it to keep it).
type RecordReader interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
	Release()
	// Progress reports bytes read so far and the total (0 if unknown).
	Progress() (read, total int64)
	// Info describes the source once reading is done.
	Info() ReaderInfo
}

// ReaderInfo describes what a reader found about its source.
type ReaderInfo struct {
	Name     string
	Format   string
	Encoding string
	Warnings []string
}

// Default limits.
const (
	DefaultMaxFieldBytes = 1 << 20
)

// FileSource is a file: CSV/TSV, JSON array or JSON Lines, Parquet or
// Arrow IPC (file or stream), optionally gzip-compressed. Format is
// detected from the extension and content unless set ("csv", "tsv",
// "json", "jsonl", "parquet", "arrow").
type FileSource struct {
	Path   string
	Format string
	// MaxFieldBytes truncates longer CSV fields and JSON values (default
	// 1 MiB).
	MaxFieldBytes int
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Open implements Source.
func (f FileSource) Open(ctx context.Context) (RecordReader, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("profiler: file %q does not exist", filepath.Base(f.Path))
		}
		return nil, fmt.Errorf("profiler: opening %q: %w", filepath.Base(f.Path), err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	name := filepath.Base(f.Path)
	lower := strings.ToLower(name)
	cr := &countingReader{r: fh}
	var r io.Reader = bufio.NewReaderSize(cr, 256<<10)
	br := r.(*bufio.Reader)
	magic, _ := br.Peek(8)
	gz := len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b
	if gz {
		zr, err := gzip.NewReader(br)
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("profiler: %s: bad gzip data: %w", name, err)
		}
		r = bufio.NewReaderSize(zr, 256<<10)
		br = r.(*bufio.Reader)
		magic, _ = br.Peek(8)
		lower = strings.TrimSuffix(lower, ".gz")
	}
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), filepath.Ext(strings.TrimSuffix(name, ".gz")))
	format := f.Format
	if format == "" {
		format = detectFormat(lower, magic)
	}
	base := baseReader{name: name, format: format, read: &cr.n, total: st.Size(), closer: fh}
	mf := f.MaxFieldBytes
	if mf <= 0 {
		mf = DefaultMaxFieldBytes
	}
	switch format {
	case "csv", "tsv":
		src, sn, err := sniffCSV(r, format == "tsv")
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("%w (%s)", err, filepath.Base(f.Path))
		}
		if sn.Delimiter == '\t' {
			base.format = "tsv"
		} else {
			base.format = "csv"
		}
		base.encoding = sn.Encoding
		if !sn.Header {
			base.warnings = append(base.warnings, "no header row detected; columns are named column_1, column_2, …")
		}
		if sn.Preamble > 0 {
			base.warnings = append(base.warnings, fmt.Sprintf("skipped %d line(s) above the table (a title or note)", sn.Preamble))
		}
		return &csvSource{baseReader: base, csvReader: newCSVReader(src, sn, mf)}, nil
	case "json", "jsonl":
		jr, err := newJSONReader(r, mf)
		if err != nil {
			fh.Close()
			return nil, err
		}
		base.format = jr.format
		return &jsonSource{baseReader: base, jsonReader: jr}, nil
	case "parquet", "arrow":
		var ra readAtSeeker = fh
		if gz {
			tmp, err := spill(r, st.Size())
			if err != nil {
				fh.Close()
				return nil, err
			}
			fh.Close()
			ra = tmp
			base.closer = tmpCloser{tmp}
		}
		rr, err := openColumnar(ra, format)
		if err != nil {
			base.closer.Close()
			return nil, fmt.Errorf("profiler: %s: %w", filepath.Base(f.Path), err)
		}
		return &arrowSource{baseReader: base, rr: rr}, nil
	}
	fh.Close()
	return nil, fmt.Errorf("profiler: unknown format %q for %s; use csv, tsv, json, jsonl, parquet or arrow", format, filepath.Base(f.Path))
}

func detectFormat(lower string, magic []byte) string {
	switch {
	case len(magic) >= 4 && string(magic[:4]) == "PAR1":
		return "parquet"
	case len(magic) >= 6 && string(magic[:6]) == "ARROW1":
		return "arrow"
	case len(magic) >= 4 && magic[0] == 0xff && magic[1] == 0xff && magic[2] == 0xff && magic[3] == 0xff:
		return "arrow"
	}
	ext := filepath.Ext(lower)
	switch ext {
	case ".tsv", ".tab":
		return "tsv"
	case ".json", ".jsonl", ".ndjson":
		return "json"
	case ".parquet", ".pq":
		return "parquet"
	case ".arrow", ".ipc", ".feather", ".arrows":
		return "arrow"
	}
	for _, b := range magic {
		switch b {
		case ' ', '\n', '\r', '\t':
			continue
		case '[', '{':
			return "json"
		}
		break
	}
	return "csv"
}

type readAtSeeker interface {
	io.ReaderAt
	io.ReadSeeker
}

type tmpCloser struct{ f *os.File }

func (t tmpCloser) Close() error {
	t.f.Close()
	return os.Remove(t.f.Name())
}

// maxSpillRatio bounds how many times its compressed size a columnar
// file may grow when spilled: compact formats gain little from gzip, and
// a gzip bomb (a thousandfold) would fill the temporary directory.
const maxSpillRatio = 64

// spill decompresses a stream of a file of compressed bytes to a
// temporary file, for formats that need random access (Parquet, Arrow
// IPC), refusing more than maxSpillRatio times compressed bytes.
func spill(r io.Reader, compressed int64) (*os.File, error) {
	tmp, err := os.CreateTemp("", "selmem-profile-*")
	if err != nil {
		return nil, err
	}
	limit := maxSpillRatio * max(compressed, 1<<20)
	n, err := io.Copy(tmp, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = fmt.Errorf("it grows past %d times its compressed size; decompress it first", maxSpillRatio)
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("profiler: decompressing: %w", err)
	}
	return tmp, nil
}

type batchReader interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
	Release()
}

// openColumnar opens a Parquet file or an Arrow IPC file or stream. Its
// Arrow memory comes from a budgetAllocator, and Arrow IPC metadata is
// checked first (ipcmeta), so a malformed file is an error, not a crash.
func openColumnar(ra readAtSeeker, format string) (batchReader, error) {
	size, err := ra.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if _, err := ra.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	mem := newBudgetAllocator(columnarMemory)
	if format == "parquet" {
		props := parquet.NewReaderProperties(mem)
		props.BufferedStreamEnabled = true // a column chunk is read in parts, not whole
		pf, err := file.NewParquetReader(ra, file.WithReadProps(props))
		if err != nil {
			return nil, fmt.Errorf("not a readable Parquet file: %w", err)
		}
		if err := checkParquet(pf, size); err != nil {
			pf.Close()
			return nil, err
		}
		// Not Parallel: the reader's own goroutines would end the process
		// on a panic over a malformed file, which Profile recovers from
		// in its goroutine.
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 32768}, mem)
		if err != nil {
			pf.Close()
			return nil, err
		}
		rr, err := fr.GetRecordReader(context.Background(), nil, nil)
		if err != nil {
			pf.Close()
			return nil, err
		}
		return &closingReader{batchReader: rr, close: pf.Close}, nil
	}
	if err := ipcmeta.Check(ra, size); err != nil {
		return nil, err
	}
	magic := make([]byte, 6)
	io.ReadFull(ra, magic)
	ra.Seek(0, io.SeekStart)
	if string(magic) == "ARROW1" {
		fr, err := ipc.NewFileReader(ra, ipc.WithAllocator(mem))
		if err != nil {
			return nil, fmt.Errorf("not a readable Arrow IPC file: %w", err)
		}
		return &ipcFileReader{fr: fr}, nil
	}
	// NewReader would not pass its size limits on to its message reader.
	r, err := ipc.NewReaderFromMessageReader(ipc.NewMessageReader(ra, ipc.WithAllocator(mem)), ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("not a readable Arrow IPC stream: %w", err)
	}
	return r, nil
}

type closingReader struct {
	batchReader
	close func() error
}

func (c *closingReader) Release() { c.batchReader.Release(); c.close() }

type ipcFileReader struct {
	fr  *ipc.FileReader
	i   int
	rec arrow.RecordBatch
	err error
}

func (r *ipcFileReader) Next() bool {
	if r.i >= r.fr.NumRecords() {
		return false
	}
	rec, err := r.fr.RecordBatch(r.i)
	if err != nil {
		r.err = err
		return false
	}
	r.i++
	r.rec = rec
	return true
}
func (r *ipcFileReader) RecordBatch() arrow.RecordBatch { return r.rec }
func (r *ipcFileReader) Err() error                     { return r.err }
func (r *ipcFileReader) Release()                       { r.fr.Close() }

type baseReader struct {
	name, format, encoding string
	warnings               []string
	read                   *atomic.Int64
	total                  int64
	closer                 io.Closer
}

func (b *baseReader) Progress() (int64, int64) {
	if b.read == nil {
		return 0, b.total
	}
	return b.read.Load(), b.total
}

func (b *baseReader) info(extra []string) ReaderInfo {
	return ReaderInfo{Name: b.name, Format: b.format, Encoding: b.encoding, Warnings: append(append([]string(nil), b.warnings...), extra...)}
}

func (b *baseReader) close() {
	if b.closer != nil {
		b.closer.Close()
		b.closer = nil
	}
}

type csvSource struct {
	baseReader
	*csvReader
}

func (c *csvSource) Info() ReaderInfo { return c.info(c.warningList()) }
func (c *csvSource) Release()         { c.csvReader.Release(); c.close() }

type jsonSource struct {
	baseReader
	*jsonReader
}

func (j *jsonSource) Info() ReaderInfo { return j.info(j.warns) }
func (j *jsonSource) Release()         { j.jsonReader.Release(); j.close() }

type arrowSource struct {
	baseReader
	rr batchReader
}

func (a *arrowSource) Next() bool                     { return a.rr.Next() }
func (a *arrowSource) RecordBatch() arrow.RecordBatch { return a.rr.RecordBatch() }
func (a *arrowSource) Err() error                     { return a.rr.Err() }
func (a *arrowSource) Info() ReaderInfo               { return a.info(nil) }
func (a *arrowSource) Release()                       { a.rr.Release(); a.close() }

var (
	_ Source       = FileSource{}
	_ RecordReader = (*csvSource)(nil)
	_ RecordReader = (*jsonSource)(nil)
	_ RecordReader = (*arrowSource)(nil)
)
