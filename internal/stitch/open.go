package stitch

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// OpenParquet opens the Parquet file at loc through open and reads its
// footer; when rows is not negative the file must have that many rows.
// Closing the reader closes the file. The errors name loc: the opener's
// error, a footer that does not parse, or ErrMisaligned for another row
// count (nothing is left open then).
func OpenParquet(ctx context.Context, open Opener, loc string, rows int64) (*file.Reader, error) {
	f, err := open(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	if rows >= 0 && pf.NumRows() != rows {
		pf.Close()
		return nil, fmt.Errorf("%w: %s has %d rows, base has %d", ErrMisaligned, loc, pf.NumRows(), rows)
	}
	return pf, nil
}
