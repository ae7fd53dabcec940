package v4manifest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/mumbling"
)

// TestReadBackIsARead holds ReadBack to what a Reader returns for the
// same manifest, for every option a full read takes.
func TestReadBackIsARead(t *testing.T) {
	sc := allTypesSchema()
	rows := sampleRows()
	// Rows that inherit (ADDED, nothing explicit), one relative location.
	rows = append(rows,
		TrackedFile{Tracking: Tracking{Status: StatusAdded}, ContentType: ContentData, FormatVersion: 4, Location: "data/d.parquet", FileFormat: "parquet", RecordCount: 3, FileSizeInBytes: 1},
		TrackedFile{Tracking: Tracking{Status: StatusAdded}, ContentType: ContentData, FormatVersion: 4, Location: "s3://b/t/data/e.parquet", FileFormat: "parquet", RecordCount: 4, FileSizeInBytes: 1, Pos: 9})
	const table = "s3://b/t"
	data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc), TableLocation: table}, rows)
	mask, err := mumbling.Encode([]uint32{1, 5})
	require.NoError(t, err)
	root := TrackedFile{Tracking: Tracking{Status: StatusExisting, SnapshotID: ptr(int64(12)), SequenceNumber: ptr(int64(6)), FileSequenceNumber: ptr(int64(6)), FirstRowID: ptr(int64(5000))},
		ContentType: ContentDataManifest, FormatVersion: 4, Location: "metadata/l.parquet", RecordCount: int64(len(rows)), ManifestInfo: &ManifestInfo{DV: mask}}
	before := sampleRows()
	for name, opts := range map[string]ReaderOptions{
		"as stored":         {},
		"resolved":          {TableLocation: table},
		"inherited, masked": {TableLocation: table, InheritFrom: &root},
		"masked kept":       {TableLocation: table, InheritFrom: &root, IncludeMasked: true},
		"positions":         {TableLocation: table, InheritFrom: &root, Positions: map[int64]bool{0: true, 4: true, 5: true}},
		"positions, kept":   {TableLocation: table, InheritFrom: &root, Positions: map[int64]bool{3: true, 5: true}, IncludeMasked: true},
	} {
		t.Run(name, func(t *testing.T) {
			want := readAll(t, data, opts)
			got, err := ReadBack(rows, table, opts)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
	require.Equal(t, before, rows[:len(before)], "ReadBack leaves its rows alone")
	require.Equal(t, int64(9), rows[len(rows)-1].Pos)

	_, err = ReadBack(rows, table, ReaderOptions{Columns: []int{IDLocation}})
	require.ErrorIs(t, err, ErrProjected)
	_, err = ReadBack(rows, table, ReaderOptions{StatsFields: []int{}})
	require.ErrorIs(t, err, ErrProjected)
	bad := root
	bad.ManifestInfo = &ManifestInfo{DV: []byte{1, 2, 3}}
	_, err = ReadBack(rows, table, ReaderOptions{InheritFrom: &bad})
	require.ErrorIs(t, err, ErrMalformed)
}
