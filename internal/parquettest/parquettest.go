// Package parquettest writes small Parquet files for tests that commit data
// files to the catalog. It is test support only; nothing in the server
// imports it.
package parquettest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

// Write builds one record batch with the given fields, lets fill append the
// rows, writes it as a Parquet file at path (creating parent directories) and
// returns the file size. The test fails on any I/O or encoding error.
func Write(t testing.TB, path string, fields []arrow.Field, fill func(b *array.RecordBuilder)) int64 {
	t.Helper()
	sc := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	fill(b)
	rec := b.NewRecordBatch()
	defer rec.Release()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(sc, f, nil, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}
