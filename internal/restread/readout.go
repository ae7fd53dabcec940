package restread

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// rowWriter writes the rows `catalog read` produces; Close flushes (and
// for arrow writes the end-of-stream marker), also when no row came.
type rowWriter interface {
	Write(rec arrow.RecordBatch) error
	Close() error
}

// newRowWriter returns the writer of format (csv, jsonl, arrow, parquet)
// over w for records of schema sc.
func newRowWriter(format string, w io.Writer, sc *arrow.Schema) (rowWriter, error) {
	switch format {
	case "arrow":
		return ipc.NewWriter(w, ipc.WithSchema(sc)), nil
	case "parquet":
		// The arrow fields carry PARQUET:field_id, which pqarrow writes as
		// the Parquet field ids.
		pw, err := pqarrow.NewFileWriter(sc, w, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd)),
			pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return nil, fmt.Errorf("read: parquet writer: %w", err)
		}
		return parquetWriter{pw}, nil
	case "csv":
		for _, f := range sc.Fields() {
			if arrow.IsNested(f.Type.ID()) {
				return nil, fmt.Errorf("read: --format csv: column %s is %s; use jsonl or arrow for nested columns", f.Name, f.Type)
			}
		}
		bw := bufio.NewWriter(w)
		return &csvWriter{w: csv.NewWriter(bw, sc, csv.WithHeader(true), csv.WithNullWriter("")), bw: bw}, nil
	case "jsonl":
		return &jsonlWriter{w: bufio.NewWriter(w), sc: sc}, nil
	}
	return nil, fmt.Errorf("read: unknown format %q", format)
}

// parquetWriter writes each record as a row group; Close writes the
// footer (a file of no rows when none came).
type parquetWriter struct{ w *pqarrow.FileWriter }

func (p parquetWriter) Write(rec arrow.RecordBatch) error { return p.w.Write(rec) }
func (p parquetWriter) Close() error                      { return p.w.Close() }

// WriteAtomically runs write on a temporary file beside path and renames
// it to path when write and the file's close succeed; otherwise the
// temporary file is removed and path is left as it was.
func WriteAtomically(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("read: --out: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("read: --out: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("read: --out: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("read: --out: %w", err)
	}
	return nil
}

// csvWriter writes the header even when there are no rows.
type csvWriter struct {
	w       *csv.Writer
	bw      *bufio.Writer
	written bool
}

func (c *csvWriter) Write(rec arrow.RecordBatch) error {
	c.written = true
	return c.w.Write(rec)
}

func (c *csvWriter) Close() error {
	if !c.written {
		// arrow's csv writer writes its header with the first record.
		if err := c.w.Write(emptyRecord(c.w)); err != nil {
			return err
		}
	}
	if err := c.w.Flush(); err != nil {
		return err
	}
	return c.bw.Flush()
}

// jsonlWriter writes one object per row, keys in column order.
type jsonlWriter struct {
	w  *bufio.Writer
	sc *arrow.Schema
}

func (j *jsonlWriter) Write(rec arrow.RecordBatch) error {
	names := make([][]byte, rec.NumCols())
	for i, f := range j.sc.Fields() {
		names[i], _ = json.Marshal(f.Name)
	}
	for r := 0; r < int(rec.NumRows()); r++ {
		j.w.WriteByte('{')
		for c := 0; c < int(rec.NumCols()); c++ {
			if c > 0 {
				j.w.WriteByte(',')
			}
			v, err := json.Marshal(rec.Column(c).GetOneForMarshal(r))
			if err != nil {
				return fmt.Errorf("column %s row %d: %w", j.sc.Field(c).Name, r, err)
			}
			j.w.Write(names[c])
			j.w.WriteByte(':')
			j.w.Write(v)
		}
		j.w.WriteString("}\n")
	}
	return nil
}

func (j *jsonlWriter) Close() error { return j.w.Flush() }

// emptyRecord is a record of no rows with the writer's schema.
func emptyRecord(w *csv.Writer) arrow.RecordBatch {
	sc := w.Schema()
	cols := make([]arrow.Array, sc.NumFields())
	for i, f := range sc.Fields() {
		cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, 0)
	}
	return array.NewRecordBatch(sc, cols, 0)
}
