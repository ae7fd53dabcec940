package v4export_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/v4export"
	"github.com/lakehold/catalog/v4manifest"
)

var schema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "day", Type: iceberg.PrimitiveTypes.Date},
	iceberg.NestedField{ID: 4, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
)

var spec = iceberg.NewPartitionSpecID(1,
	iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}},
	iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "day_day", Transform: iceberg.DayTransform{}},
)

func ptr[T any](v T) *T { return &v }

// rows are two data files (one with a deletion vector) and an equality
// delete, as the v4 reader yields them.
func rows() (data, eq []v4manifest.TrackedFile) {
	part := map[int]any{1000: "eu", 1001: iceberg.Date(19000)}
	data = []v4manifest.TrackedFile{
		{Tracking: v4manifest.Tracking{Status: v4manifest.StatusExisting, SequenceNumber: ptr[int64](3), FileSequenceNumber: ptr[int64](2), FirstRowID: ptr[int64](100)},
			ContentType: v4manifest.ContentData, Location: "s3://b/t2/data/a.parquet", FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: 1000,
			SpecID: ptr[int32](1), Partition: part,
			ContentStats: map[int]*v4manifest.FieldStats{
				1: {LowerBound: int64(5), UpperBound: int64(14), ValueCount: ptr[int64](10), NullValueCount: ptr[int64](0)},
				4: {LowerBound: float32(0.5), UpperBound: 2.5, NaNValueCount: ptr[int64](1)},
			},
			DeletionVector: &v4manifest.DeletionVector{Location: "s3://b/t2/data/dv.puffin", Offset: 4, SizeInBytes: 40, Cardinality: 2}},
		{Tracking: v4manifest.Tracking{Status: v4manifest.StatusAdded, SequenceNumber: ptr[int64](5), FileSequenceNumber: ptr[int64](5), FirstRowID: ptr[int64](110)},
			ContentType: v4manifest.ContentData, Location: "s3://b/t2/data/b.parquet", FileFormat: "parquet", RecordCount: 7, FileSizeInBytes: 700,
			SpecID: ptr[int32](1), Partition: map[int]any{1000: nil, 1001: iceberg.Date(19001)}},
	}
	eq = []v4manifest.TrackedFile{
		{Tracking: v4manifest.Tracking{Status: v4manifest.StatusExisting, SequenceNumber: ptr[int64](4), FileSequenceNumber: ptr[int64](4)},
			ContentType: v4manifest.ContentEqualityDeletes, Location: "s3://b/t2/data/eq.parquet", FileFormat: "parquet", RecordCount: 1,
			FileSizeInBytes: 90, SpecID: ptr[int32](1), Partition: part, EqualityIDs: []int32{1}},
	}
	return data, eq
}

func input(version int) v4export.Input {
	data, eq := rows()
	return v4export.Input{FormatVersion: version, Schema: schema, Specs: []iceberg.PartitionSpec{spec}, SnapshotID: 77,
		SequenceNumber: 6, FirstRowID: 117, Data: data, EqualityDeletes: eq,
		ManifestLocation: func(n int) string { return "s3://b/t2/metadata/m" + string(rune('0'+n)) + ".avro" }}
}

func read(t *testing.T, out *v4export.Output) (map[string]iceberg.ManifestEntry, []iceberg.ManifestFile) {
	t.Helper()
	lists, err := iceberg.ReadManifestList(bytes.NewReader(out.ManifestList))
	require.NoError(t, err)
	byLoc := map[string][]byte{}
	for _, m := range out.Manifests {
		byLoc[m.Location] = m.Data
	}
	got := map[string]iceberg.ManifestEntry{}
	for _, mf := range lists {
		entries, err := iceberg.ReadManifest(mf, bytes.NewReader(byLoc[mf.FilePath()]), true)
		require.NoError(t, err)
		for _, e := range entries {
			got[e.DataFile().FilePath()] = e
		}
	}
	return got, lists
}

func TestBuildV3KeepsLineageAndDeletes(t *testing.T) {
	out, err := v4export.Build(input(3))
	require.NoError(t, err)
	got, lists := read(t, out)
	require.Len(t, lists, 2, "one data and one delete manifest")
	assert.Equal(t, iceberg.ManifestContentData, lists[0].ManifestContent())
	assert.Equal(t, iceberg.ManifestContentDeletes, lists[1].ManifestContent())
	require.Len(t, got, 4)

	a := got["s3://b/t2/data/a.parquet"]
	assert.Equal(t, iceberg.EntryStatusEXISTING, a.Status())
	assert.Equal(t, int64(77), a.SnapshotID())
	assert.Equal(t, int64(3), a.SequenceNum())
	assert.Equal(t, int64(2), *a.FileSequenceNum())
	require.NotNil(t, a.DataFile().FirstRowID())
	assert.Equal(t, int64(100), *a.DataFile().FirstRowID())
	assert.Equal(t, "eu", a.DataFile().Partition()[1000])
	assert.Equal(t, map[int]int64{1: 10}, a.DataFile().ValueCounts())
	assert.Equal(t, map[int]int64{4: 1}, a.DataFile().NaNValueCounts())
	lo, err := iceberg.LiteralFromBytes(iceberg.PrimitiveTypes.Float64, a.DataFile().LowerBoundValues()[4])
	require.NoError(t, err)
	assert.Equal(t, 0.5, lo.Any(), "a float bound of an older type is widened to double")
	hi, err := iceberg.LiteralFromBytes(iceberg.PrimitiveTypes.Int64, a.DataFile().UpperBoundValues()[1])
	require.NoError(t, err)
	assert.Equal(t, int64(14), hi.Any())

	b := got["s3://b/t2/data/b.parquet"]
	assert.Equal(t, int64(5), b.SequenceNum())
	assert.Equal(t, int64(110), *b.DataFile().FirstRowID())
	assert.Nil(t, b.DataFile().Partition()[1000], "a null partition value stays null")

	dv := got["s3://b/t2/data/dv.puffin"]
	assert.Equal(t, iceberg.EntryContentPosDeletes, dv.DataFile().ContentType())
	assert.Equal(t, iceberg.PuffinFile, dv.DataFile().FileFormat())
	assert.Equal(t, "s3://b/t2/data/a.parquet", *dv.DataFile().ReferencedDataFile())
	assert.Equal(t, int64(4), *dv.DataFile().ContentOffset())
	assert.Equal(t, int64(40), *dv.DataFile().ContentSizeInBytes())
	assert.Equal(t, int64(2), dv.DataFile().Count())
	assert.Equal(t, int64(6), dv.SequenceNum(), "a deletion vector applies to its file whatever the file's sequence number")

	eq := got["s3://b/t2/data/eq.parquet"]
	assert.Equal(t, iceberg.EntryContentEqDeletes, eq.DataFile().ContentType())
	assert.Equal(t, []int{1}, eq.DataFile().EqualityFieldIDs())
	assert.Equal(t, int64(4), eq.SequenceNum())

	assert.Equal(t, int64(117+17), out.NextRowID, "ids from the source's next-row-id on stay free")
	assert.Equal(t, out.NextRowID, out.AddedRows)
	assert.Equal(t, "17", out.Summary["total-records"])
	assert.Equal(t, "2", out.Summary["total-delete-files"])
}

func TestBuildV2DropsRowLineage(t *testing.T) {
	in := input(2)
	in.Data[0].DeletionVector = nil
	out, err := v4export.Build(in)
	require.NoError(t, err)
	got, _ := read(t, out)
	a := got["s3://b/t2/data/a.parquet"]
	assert.Nil(t, a.DataFile().FirstRowID())
	assert.Equal(t, int64(3), a.SequenceNum())
	assert.Zero(t, out.NextRowID)
}

func TestCheckRefuses(t *testing.T) {
	rel := func(s string) string { return s[len("s3://b/t2/"):] }
	data, eq := rows()
	withCF := append([]v4manifest.TrackedFile(nil), data...)
	withCF[1].ColumnFiles = []v4manifest.ColumnFile{{Location: "s3://b/t2/data/cf.parquet", FieldIDs: []int32{4}}}
	cases := []struct {
		name    string
		version int
		data    []v4manifest.TrackedFile
		eq      []v4manifest.TrackedFile
		reason  string
	}{
		{"column files", 3, withCF, nil, v4export.ReasonColumnFiles},
		{"deletion vectors in v2", 2, data, nil, v4export.ReasonDeletionVectors},
		{"equality deletes in v1", 1, data[1:], eq, v4export.ReasonEqualityDeletes},
		{"format 4", 4, data, nil, v4export.ReasonFormatVersion},
		{"format 0", 0, data, nil, v4export.ReasonFormatVersion},
		{"v3 takes it all", 3, data, eq, ""},
		{"v2 takes equality deletes", 2, data[1:], eq, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := v4export.Check(c.version, c.data, c.eq, rel)
			if c.reason == "" {
				require.NoError(t, err)
				return
			}
			var ue *v4export.UnsupportedError
			require.True(t, errors.As(err, &ue), "%v", err)
			assert.Equal(t, c.reason, ue.Reason)
			assert.NotContains(t, err.Error(), "s3://", "the message names files relative to the table")
		})
	}
}

func TestMetadataParsesAsTheTargetFormat(t *testing.T) {
	src, err := table.NewMetadata(schema, &spec, table.UnsortedSortOrder, "s3://b/t", iceberg.Properties{
		"write.data.path": "s3://b/t/elsewhere", "write.column-files.compact.max-files": "3", "owner": "ml"})
	require.NoError(t, err)
	srcJSON, err := json.Marshal(src)
	require.NoError(t, err)
	for _, v := range []int{1, 2, 3} {
		in := input(v)
		if v < 3 {
			in.Data[0].DeletionVector = nil
		}
		if v < 2 {
			in.EqualityDeletes = nil
		}
		out, err := v4export.Build(in)
		require.NoError(t, err)
		md, err := v4export.Metadata(srcJSON, v4export.Table{FormatVersion: v, UUID: "2d0a2c61-6a4b-4d0b-9f3e-5a1f0b6f0a11",
			Location: "s3://b/t2", TimestampMS: 1_700_000_000_000, SnapshotID: 77, ManifestList: "s3://b/t2/metadata/snap.avro",
			Snapshot: out, SequenceNumber: 6})
		require.NoError(t, err)
		meta, err := table.ParseMetadataBytes(md)
		require.NoError(t, err, "v%d: %s", v, md)
		assert.Equal(t, v, meta.Version())
		assert.Equal(t, "s3://b/t2", meta.Location())
		assert.Equal(t, int64(77), meta.CurrentSnapshot().SnapshotID)
		assert.Equal(t, src.DefaultPartitionSpec(), meta.DefaultPartitionSpec(), "spec ids are kept: the manifests refer to them")
		assert.True(t, src.CurrentSchema().Equals(meta.CurrentSchema()))
		assert.Equal(t, map[string]string{"owner": "ml"}, map[string]string(meta.Properties()))
		if v == 3 {
			assert.Equal(t, int64(134), meta.NextRowID())
			require.NotNil(t, meta.CurrentSnapshot().FirstRowID)
			assert.Equal(t, int64(6), meta.LastSequenceNumber())
		}
	}
}

func TestMetadataWithoutSnapshot(t *testing.T) {
	src, err := table.NewMetadata(schema, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "s3://b/t", nil)
	require.NoError(t, err)
	srcJSON, err := json.Marshal(src)
	require.NoError(t, err)
	for _, v := range []int{1, 2, 3} {
		md, err := v4export.Metadata(srcJSON, v4export.Table{FormatVersion: v, UUID: "2d0a2c61-6a4b-4d0b-9f3e-5a1f0b6f0a11",
			Location: "s3://b/t2", TimestampMS: 1_700_000_000_000, NextRowID: 42})
		require.NoError(t, err)
		meta, err := table.ParseMetadataBytes(md)
		require.NoError(t, err, "v%d: %s", v, md)
		assert.Nil(t, meta.CurrentSnapshot())
		if v == 3 {
			assert.Equal(t, int64(42), meta.NextRowID(), "an empty export hands out no id the source used")
		}
	}
}
