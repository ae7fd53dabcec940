package v4manifest

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

// TestLayoutCacheKeysEveryInput: writers of one schema with and without
// specs and row lineage get layouts of their own, each equal to one built
// afresh, and a repeated shape gets the cached one.
func TestLayoutCacheKeysEveryInput(t *testing.T) {
	sc := allTypesSchema()
	cases := []struct {
		name    string
		specs   []iceberg.PartitionSpec
		lineage bool
	}{{"plain", nil, false}, {"specs", twoSpecs(t, sc), false}, {"lineage", nil, true}, {"both", twoSpecs(t, sc), true}}
	seen := map[*layout]string{}
	for _, c := range cases {
		got, err := layoutFor(sc, c.specs, c.lineage)
		require.NoError(t, err)
		want, err := ArrowSchema(sc, c.specs, c.lineage)
		require.NoError(t, err)
		require.True(t, want.Equal(got.schema), c.name)
		require.NotContains(t, seen, got, "%s shares a layout", c.name)
		seen[got] = c.name
		again, err := layoutFor(sc, c.specs, c.lineage)
		require.NoError(t, err)
		require.Same(t, got, again, c.name)
	}
	other := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "x", Type: iceberg.PrimitiveTypes.String})
	l, err := layoutFor(other, nil, false)
	require.NoError(t, err)
	require.NotContains(t, seen, l)
	require.Equal(t, map[int]int{1: 0}, l.statsIdx)
}

// codecs lists the compression codecs of a manifest's column chunks.
func codecs(t *testing.T, data []byte) map[compress.Compression]int {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	require.NoError(t, err)
	defer rdr.Close()
	out := map[compress.Compression]int{}
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := rdr.MetaData().RowGroup(g)
		for i := 0; i < rg.NumColumns(); i++ {
			cc, err := rg.ColumnChunk(i)
			require.NoError(t, err)
			out[cc.Compression()]++
		}
	}
	return out
}

// TestSmallManifestCodec: a leaf of at most smallManifestRows rows is
// snappy, a larger one (or one spread over batches) zstd, and all read
// back whole. An empty one has no column chunks, as before.
func TestSmallManifestCodec(t *testing.T) {
	sc := scoreSchema()
	rows := make([]TrackedFile, smallManifestRows+1)
	for i := range rows {
		rows[i] = scoreRow(i)
	}
	empty := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc}, nil)
	require.Empty(t, codecs(t, empty))
	require.Empty(t, readAll(t, empty, ReaderOptions{}))
	for _, c := range []struct {
		name  string
		n     int
		batch int
		want  compress.Compression
	}{
		{"small", smallManifestRows, 0, compress.Codecs.Snappy},
		{"large", smallManifestRows + 1, 0, compress.Codecs.Zstd},
		{"small in two batches", 4, 2, compress.Codecs.Zstd},
	} {
		data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, BatchRows: c.batch}, rows[:c.n])
		got := codecs(t, data)
		require.Len(t, got, 1, c.name)
		require.Contains(t, got, c.want, c.name)
		back := readAll(t, data, ReaderOptions{})
		require.Len(t, back, c.n, c.name)
		for i := range back {
			require.Equal(t, rows[i], back[i], "%s row %d", c.name, i)
		}
	}
}

// TestRowGroupsOneBatchOrMany: a manifest written as one batch (unbuffered
// row groups) and one written over several batches (buffered) are cut
// into the same row groups and read back the same.
func TestRowGroupsOneBatchOrMany(t *testing.T) {
	sc := scoreSchema()
	rows := make([]TrackedFile, 50)
	for i := range rows {
		rows[i] = scoreRow(i)
	}
	for _, batch := range []int{0, 10} {
		data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, BatchRows: batch, RowGroupRows: 20}, rows)
		rdr, err := file.NewParquetReader(bytes.NewReader(data))
		require.NoError(t, err)
		var sizes []int64
		for g := 0; g < rdr.NumRowGroups(); g++ {
			sizes = append(sizes, rdr.MetaData().RowGroup(g).NumRows())
		}
		require.NoError(t, rdr.Close())
		require.Equal(t, []int64{20, 20, 10}, sizes, "batch rows %d", batch)
		require.Equal(t, rows, readAll(t, data, ReaderOptions{}), "batch rows %d", batch)
	}
}
