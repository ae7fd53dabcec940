package compact

import (
	"bytes"
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakehold/catalog/internal/foldcheck"
)

// hooks let this package's tests break a fold on purpose, to prove that
// the checks catch it; both are zero outside tests.
var hooks struct {
	// skipRequired skips the required-field check before writing.
	skipRequired bool
	// alter replaces the record about to be written (not the one the
	// written file is compared with); it owns, and releases, its input.
	alter func(arrow.RecordBatch) arrow.RecordBatch
}

// verify reads the written file back from data and compares it with the
// rows written (foldcheck.Compare on a foldcheck.Sample of rows): a
// *foldcheck.MismatchError, wrapped, when they differ, another error when
// the file does not read back.
func verify(ctx context.Context, want arrow.RecordBatch, data []byte) error {
	got, err := readAll(ctx, data)
	if err != nil {
		return fmt.Errorf("compact: read back the written file: %w", err)
	}
	defer got.Release()
	if err := foldcheck.Compare(want, got, foldcheck.Sample(int(want.NumRows()), foldcheck.SampleSize)); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}

// readAll reads a whole Parquet file as one record, its columns' chunks
// (one per row group) concatenated.
func readAll(ctx context.Context, data []byte) (arrow.RecordBatch, error) {
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	cols := make([]arrow.Array, tbl.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		chunks := tbl.Column(i).Data().Chunks()
		if len(chunks) == 1 { // one row group: no copy
			chunks[0].Retain()
			cols[i] = chunks[0]
			continue
		}
		if cols[i], err = array.Concatenate(chunks, memory.DefaultAllocator); err != nil {
			return nil, err
		}
	}
	return array.NewRecordBatch(tbl.Schema(), cols, tbl.NumRows()), nil
}
