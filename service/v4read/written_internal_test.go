package v4read

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/mumbling"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// TestRememberedLeaf: LeafRows answers a remembered leaf from memory
// exactly as a read of the file does, and reads a leaf too large to
// remember from the file.
func TestRememberedLeaf(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	table := "file://" + dir
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String})
	leaf := func(n int) []v4manifest.TrackedFile {
		rows := make([]v4manifest.TrackedFile, n)
		for i := range rows {
			rows[i] = v4manifest.TrackedFile{Tracking: v4manifest.Tracking{Status: v4manifest.StatusAdded},
				ContentType: v4manifest.ContentData, FormatVersion: 4, Location: fmt.Sprintf("%s/data/f%d.parquet", table, i),
				FileFormat: "parquet", RecordCount: int64(10 + i), FileSizeInBytes: 100,
				ContentStats: map[int]*v4manifest.FieldStats{
					1: {LowerBound: int64(i), UpperBound: int64(i + 9)},
					2: {LowerBound: "a", UpperBound: fmt.Sprint("z", i)},
				}}
		}
		return rows
	}
	write := func(name string, rows []v4manifest.TrackedFile) string {
		var buf bytes.Buffer
		w, err := v4manifest.NewWriter(&buf, v4manifest.WriterOptions{Content: v4manifest.ContentDataLeaf, Schema: sc, RowLineage: true, TableLocation: table})
		require.NoError(t, err)
		for i := range rows {
			require.NoError(t, w.Write(&rows[i]))
		}
		require.NoError(t, w.Close())
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "metadata"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "metadata", name), buf.Bytes(), 0o644))
		return table + "/metadata/" + name
	}
	fileIO := func(ctx context.Context, _ *store.Warehouse, loc string) (storage.FileIO, error) {
		return storage.NewProvider().For(ctx, loc, nil)
	}
	name := func(_ *store.Warehouse, _, loc string) string { return filepath.Base(loc) }
	mask, err := mumbling.Encode([]uint32{1})
	require.NoError(t, err)
	rootRow := func(loc string, n int) *v4manifest.TrackedFile {
		return &v4manifest.TrackedFile{Tracking: v4manifest.Tracking{Status: v4manifest.StatusExisting, SnapshotID: ptr(int64(3)),
			SequenceNumber: ptr(int64(2)), FileSequenceNumber: ptr(int64(2)), FirstRowID: ptr(int64(70))},
			ContentType: v4manifest.ContentDataManifest, FormatVersion: 4, Location: "metadata/" + filepath.Base(loc),
			RecordCount: int64(n), ManifestInfo: &v4manifest.ManifestInfo{DV: mask}}
	}
	positions := map[int64]bool{0: true, 1: true, 2: true}

	small := leaf(3)
	loc := write("small.parquet", small)
	warm := New(fileIO, name)
	warm.RememberLeaf(loc, table, small)
	cold, err := New(fileIO, name).LeafRows(ctx, nil, table, rootRow(loc, 3), positions)
	require.NoError(t, err)
	require.Len(t, cold, 2, "the masked row is left out")
	require.NoError(t, os.Remove(filepath.Join(dir, "metadata", "small.parquet")))
	got, err := warm.LeafRows(ctx, nil, table, rootRow(loc, 3), positions)
	require.NoError(t, err, "served from memory: the file is gone")
	require.Equal(t, cold, got)

	big := leaf(maxRememberedLeafRows + 1)
	loc = write("big.parquet", big)
	warm.RememberLeaf(loc, table, big)
	require.NoError(t, os.Remove(filepath.Join(dir, "metadata", "big.parquet")))
	_, err = warm.LeafRows(ctx, nil, table, rootRow(loc, len(big)), positions)
	require.Error(t, err, "too many rows to remember: read from the (missing) file")
}

func ptr[T any](v T) *T { return &v }
