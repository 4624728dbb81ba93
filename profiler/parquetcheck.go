package profiler

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// checkParquet refuses a Parquet file whose column chunks or page
// indexes lie outside its size bytes. arrow-go sizes its reads of a
// column chunk by the claimed length, outside any allocator, and opens a
// struct's children in goroutines of its own: a negative or huge claim
// would end the process, where this is an error.
func checkParquet(pf *file.Reader, size int64) error {
	within := func(what string, rg, col int, start, n int64) error {
		if start < 0 || n < 0 || start > size || n > size-start {
			return fmt.Errorf("the source is malformed: row group %d, column %d: %s of %d bytes at %d outside the file's %d", rg, col, what, n, start, size)
		}
		return nil
	}
	md := pf.MetaData()
	for i := range pf.NumRowGroups() {
		rg := md.RowGroup(i)
		for j := range rg.NumColumns() {
			col, err := rg.ColumnChunk(j)
			if err != nil {
				return fmt.Errorf("the source is malformed: %w", err)
			}
			start := col.DataPageOffset()
			if col.HasDictionaryPage() && col.DictionaryPageOffset() > 0 && start > col.DictionaryPageOffset() {
				start = col.DictionaryPageOffset()
			}
			if err := within("a column chunk", i, j, start, col.TotalCompressedSize()); err != nil {
				return err
			}
			for _, index := range []func(int) (metadata.IndexLocation, bool){rg.ColumnIndexLocation, rg.OffsetIndexLocation} {
				if l, ok := index(j); ok {
					if err := within("a page index", i, j, l.Offset, int64(l.Length)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
