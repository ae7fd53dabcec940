package v4convert

import (
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/v4manifest"
)

var testSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "cat", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "day", Type: iceberg.PrimitiveTypes.Date},
	iceberg.NestedField{ID: 4, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 5, Name: "tags", Type: &iceberg.ListType{ElementID: 6, Element: iceberg.PrimitiveTypes.String}})

var testSpec = iceberg.NewPartitionSpecID(1,
	iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "cat", Transform: iceberg.IdentityTransform{}},
	iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "day", Transform: iceberg.IdentityTransform{}})

func le64(v int64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

func le32(v int32) []byte { return le64(int64(v))[:4] }

type fileOpt func(*iceberg.DataFileBuilder)

func file(t *testing.T, content iceberg.ManifestEntryContent, path string, format iceberg.FileFormat, part map[int]any, opts ...fileOpt) iceberg.DataFile {
	t.Helper()
	spec := testSpec
	if part == nil {
		spec = *iceberg.UnpartitionedSpec
	}
	b, err := iceberg.NewDataFileBuilder(spec, content, path, format, part, nil, nil, 10, 1000)
	require.NoError(t, err)
	for _, o := range opts {
		o(b)
	}
	return b.Build()
}

func entry(snap, seq, fileSeq int64, df iceberg.DataFile) iceberg.ManifestEntry {
	return iceberg.NewManifestEntry(iceberg.EntryStatusEXISTING, &snap, &seq, &fileSeq, df)
}

func convert(t *testing.T, entries ...iceberg.ManifestEntry) (*Output, error) {
	t.Helper()
	return Convert(Input{Schema: testSchema, Specs: []iceberg.PartitionSpec{*iceberg.UnpartitionedSpec, testSpec}, Entries: entries})
}

// TestConvertCarriesDataFile checks every value a v3 data entry carries
// into its v4 row.
func TestConvertCarriesDataFile(t *testing.T) {
	part := map[int]any{1000: "a", 1001: iceberg.Date(19000)}
	df := file(t, iceberg.EntryContentData, "s3://b/t/data/a.parquet", iceberg.ParquetFile, part, func(b *iceberg.DataFileBuilder) {
		b.ValueCounts(map[int]int64{1: 10, 2: 10, 4: 10, 6: 30}).NullValueCounts(map[int]int64{2: 1}).
			NaNValueCounts(map[int]int64{4: 2, 1: 0}).ColumnSizes(map[int]int64{1: 80}).
			LowerBoundValues(map[int][]byte{1: le64(-5), 2: []byte("aa"), 3: le32(18000), 6: []byte("x"), 99: le64(1)}).
			UpperBoundValues(map[int][]byte{1: le32(7), 2: []byte("zz")}).
			KeyMetadata([]byte{1, 2}).SplitOffsets([]int64{4, 100}).SortOrderID(3).FirstRowID(500)
	})
	out, err := convert(t, entry(11, 4, 3, df))
	require.NoError(t, err)
	require.Len(t, out.Data, 1)
	r := out.Data[0]
	require.Equal(t, v4manifest.StatusExisting, r.Tracking.Status)
	require.Equal(t, int64(11), *r.Tracking.SnapshotID)
	require.Equal(t, int64(4), *r.Tracking.SequenceNumber)
	require.Equal(t, int64(3), *r.Tracking.FileSequenceNumber)
	require.Equal(t, int64(500), *r.Tracking.FirstRowID)
	require.Nil(t, r.Tracking.DVSnapshotID)
	require.Equal(t, v4manifest.ContentData, r.ContentType)
	require.Equal(t, "s3://b/t/data/a.parquet", r.Location)
	require.Equal(t, "parquet", r.FileFormat)
	require.Equal(t, int64(10), r.RecordCount)
	require.Equal(t, int64(1000), r.FileSizeInBytes)
	require.Equal(t, int32(1), *r.SpecID)
	require.Equal(t, map[int]any{1000: "a", 1001: iceberg.Date(19000)}, r.Partition)
	require.Equal(t, int32(3), *r.SortOrderID)
	require.Equal(t, []byte{1, 2}, r.KeyMetadata)
	require.Equal(t, []int64{4, 100}, r.SplitOffsets)
	require.Equal(t, int64(-5), r.ContentStats[1].LowerBound)
	require.Equal(t, int64(7), r.ContentStats[1].UpperBound, "a 4-byte bound of a promoted int field is widened")
	require.Nil(t, r.ContentStats[1].NaNValueCount, "NaN counts only for floating-point fields")
	require.Equal(t, "aa", r.ContentStats[2].LowerBound)
	require.Equal(t, "zz", r.ContentStats[2].UpperBound)
	require.Equal(t, int64(1), *r.ContentStats[2].NullValueCount)
	require.Equal(t, iceberg.Date(18000), r.ContentStats[3].LowerBound)
	require.Equal(t, int64(2), *r.ContentStats[4].NaNValueCount)
	require.Nil(t, r.ContentStats[4].TightBounds, "v3 says nothing about tightness")
	require.NotContains(t, r.ContentStats, 6, "fields inside a list have no v4 stats")
	require.NotContains(t, r.ContentStats, 99, "fields not in the schema are dropped")
	require.Equal(t, int64(10), out.Records)
}

// TestConvertDeletionVectors moves v3 DVs onto their data rows.
func TestConvertDeletionVectors(t *testing.T) {
	a := file(t, iceberg.EntryContentData, "s3://b/t/data/a.parquet", iceberg.ParquetFile, nil)
	b := file(t, iceberg.EntryContentData, "s3://b/t/data/b.parquet", iceberg.ParquetFile, nil)
	dv := func(ref string, off int64) iceberg.DataFile {
		return file(t, iceberg.EntryContentPosDeletes, "s3://b/t/data/dv.puffin", iceberg.PuffinFile, nil, func(b *iceberg.DataFileBuilder) {
			b.ReferencedDataFile(ref).ContentOffset(off).ContentSizeInBytes(40)
		})
	}
	out, err := convert(t, entry(1, 1, 1, a), entry(1, 1, 1, b), entry(7, 3, 3, dv("s3://b/t/data/b.parquet", 4)),
		entry(7, 3, 3, dv("s3://b/t/data/gone.parquet", 44)))
	require.NoError(t, err)
	require.Nil(t, out.Data[0].DeletionVector)
	got := out.Data[1]
	require.Equal(t, &v4manifest.DeletionVector{Location: "s3://b/t/data/dv.puffin", Offset: 4, SizeInBytes: 40, Cardinality: 10}, got.DeletionVector)
	require.Equal(t, int64(7), *got.Tracking.DVSnapshotID)
	require.Equal(t, int64(1), *got.Tracking.SequenceNumber, "the data row keeps its own sequence number")
	require.Equal(t, 1, out.DeletionVectors)
	require.Equal(t, int64(10), out.DeletedRows)
	require.Equal(t, 1, out.DanglingDVs)

	_, err = convert(t, entry(1, 1, 1, a), entry(7, 3, 3, dv("s3://b/t/data/a.parquet", 4)), entry(8, 4, 4, dv("s3://b/t/data/a.parquet", 90)))
	var ue *UnsupportedError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, ue.What, "two deletion vectors")
}

// TestConvertRefusals lists what cannot be expressed in v4.
func TestConvertRefusals(t *testing.T) {
	pos := func(name string) iceberg.ManifestEntry {
		return entry(2, 2, 2, file(t, iceberg.EntryContentPosDeletes, "s3://b/t/data/"+name, iceberg.ParquetFile, nil))
	}
	noRef := entry(2, 2, 2, file(t, iceberg.EntryContentPosDeletes, "s3://b/t/data/x.puffin", iceberg.PuffinFile, nil))
	badPart := entry(2, 2, 2, file(t, iceberg.EntryContentData, "s3://b/t/data/p.parquet", iceberg.ParquetFile, map[int]any{1000: 5, 1001: iceberg.Date(1)}))
	eqNoIDs := entry(2, 2, 2, file(t, iceberg.EntryContentEqDeletes, "s3://b/t/data/eq.parquet", iceberg.ParquetFile, nil))
	cases := []struct {
		name    string
		entries []iceberg.ManifestEntry
		what    string
		count   int
		example string
	}{
		{"position delete files", []iceberg.ManifestEntry{pos("p1.parquet"), pos("p2.parquet")}, "position delete files", 2, "s3://b/t/data/p1.parquet"},
		{"dv without reference", []iceberg.ManifestEntry{noRef}, "deletion vectors without", 1, "s3://b/t/data/x.puffin"},
		{"partition value of another type", []iceberg.ManifestEntry{badPart}, "partition values", 1, "s3://b/t/data/p.parquet"},
		{"equality deletes without ids", []iceberg.ManifestEntry{eqNoIDs}, "without equality ids", 1, "s3://b/t/data/eq.parquet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := convert(t, c.entries...)
			var ue *UnsupportedError
			require.True(t, errors.As(err, &ue), "%v", err)
			require.Contains(t, ue.What, c.what)
			require.Equal(t, c.count, ue.Count)
			require.Equal(t, c.example, ue.Example)
			require.NotEmpty(t, ue.Hint)
		})
	}
}

// TestConvertEqualityDeletes carries equality-delete files as v4 rows.
func TestConvertEqualityDeletes(t *testing.T) {
	eq := file(t, iceberg.EntryContentEqDeletes, "s3://b/t/data/eq.parquet", iceberg.ParquetFile, nil, func(b *iceberg.DataFileBuilder) {
		b.EqualityFieldIDs([]int{1, 2})
	})
	out, err := convert(t, entry(5, 6, 6, eq))
	require.NoError(t, err)
	require.Empty(t, out.Data)
	require.Len(t, out.EqualityDeletes, 1)
	r := out.EqualityDeletes[0]
	require.Equal(t, v4manifest.ContentEqualityDeletes, r.ContentType)
	require.Equal(t, []int32{1, 2}, r.EqualityIDs)
	require.Equal(t, int64(6), *r.Tracking.SequenceNumber)
	require.Nil(t, r.Tracking.FirstRowID)
}

// TestPartitionValue covers the shapes iceberg-go decodes partition
// values into.
func TestPartitionValue(t *testing.T) {
	cases := []struct {
		typ  iceberg.Type
		in   any
		want any
		ok   bool
	}{
		{iceberg.PrimitiveTypes.Int32, int32(4), int32(4), true},
		{iceberg.PrimitiveTypes.Int32, int64(1) << 40, nil, false},
		{iceberg.PrimitiveTypes.Int64, int32(4), int64(4), true},
		{iceberg.PrimitiveTypes.Date, int32(3), iceberg.Date(3), true},
		{iceberg.PrimitiveTypes.Date, iceberg.Date(3), iceberg.Date(3), true},
		{iceberg.PrimitiveTypes.Timestamp, int64(9), iceberg.Timestamp(9), true},
		{iceberg.PrimitiveTypes.String, "x", "x", true},
		{iceberg.PrimitiveTypes.String, 3, nil, false},
		{iceberg.PrimitiveTypes.Binary, []byte{1}, []byte{1}, true},
		{iceberg.PrimitiveTypes.Bool, true, true, true},
		{iceberg.PrimitiveTypes.Int32, nil, nil, true},
	}
	for _, c := range cases {
		got, ok := partitionValue(c.typ, c.in)
		require.Equal(t, c.ok, ok, "%s %v", c.typ, c.in)
		if ok {
			require.Equal(t, c.want, got, "%s %v", c.typ, c.in)
		}
	}
}

// TestTree lays converted rows into leaves of bounded size.
func TestTree(t *testing.T) {
	out := &Output{}
	for i := 0; i < 5; i++ {
		seq := int64(i + 1)
		out.Data = append(out.Data, v4manifest.TrackedFile{Tracking: v4manifest.Tracking{Status: v4manifest.StatusExisting, SequenceNumber: &seq},
			ContentType: v4manifest.ContentData, Location: "s3://b/t/data/f.parquet", RecordCount: 3})
		out.Records += 3
	}
	out.EqualityDeletes = []v4manifest.TrackedFile{{Tracking: v4manifest.Tracking{Status: v4manifest.StatusExisting}, ContentType: v4manifest.ContentEqualityDeletes}}
	n := 0
	snap := v4tree.Snapshot{ID: 42, SequenceNumber: 9, LeafLocation: func() string { n++; return "leaf" + string(rune('0'+n)) }}
	res, err := Tree(snap, out, 2, 7)
	require.NoError(t, err)
	require.Equal(t, table.OpReplace, res.Operation)
	require.Len(t, res.Leaves, 4)
	require.Len(t, res.Root, 4)
	for i, l := range res.Leaves {
		require.Equal(t, i, l.RootIndex)
		rr := res.Root[i]
		require.Equal(t, l.Location, rr.Location)
		require.Equal(t, v4manifest.StatusAdded, rr.Tracking.Status)
		require.Equal(t, int64(42), *rr.Tracking.SnapshotID)
		require.Nil(t, rr.Tracking.FirstRowID, "converted rows keep their own first_row_id")
		require.Equal(t, int64(len(l.Rows)), rr.RecordCount)
	}
	require.Equal(t, []int{2, 2, 1, 1}, []int{len(res.Leaves[0].Rows), len(res.Leaves[1].Rows), len(res.Leaves[2].Rows), len(res.Leaves[3].Rows)})
	require.Equal(t, v4manifest.ContentDeleteManifest, res.Root[3].ContentType)
	require.Equal(t, int64(1), res.Root[0].ManifestInfo.MinSequenceNumber)
	require.Equal(t, int32(2), res.Root[0].ManifestInfo.ExistingFiles)
	require.Equal(t, "7", res.Summary[SummaryConversion])
	require.Equal(t, "15", res.Summary["total-records"])
	require.Zero(t, res.AddedRows)
}

// TestConvertDroppedPartitionSource refuses a table with a spec whose
// source column is gone: the v4 partition column cannot be typed.
func TestConvertDroppedPartitionSource(t *testing.T) {
	gone := iceberg.NewPartitionSpecID(2, iceberg.PartitionField{SourceIDs: []int{99}, FieldID: 1002, Name: "old", Transform: iceberg.IdentityTransform{}})
	_, err := Convert(Input{Schema: testSchema, Specs: []iceberg.PartitionSpec{testSpec, gone}})
	var ue *UnsupportedError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, "spec 2 field old", ue.Example)
	require.Contains(t, ue.What, "source column was dropped")
}
