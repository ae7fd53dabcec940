package v4manifest

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/mumbling"
)

// allTypesSchema has one field of every primitive type, a nested struct
// (its leaf gets stats) and a list (no stats).
func allTypesSchema() *iceberg.Schema {
	return iceberg.NewSchema(3,
		iceberg.NestedField{ID: 1, Name: "b", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 3, Name: "l", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 6, Name: "dec9", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 7, Name: "dec18", Type: iceberg.DecimalTypeOf(18, 4)},
		iceberg.NestedField{ID: 8, Name: "dec38", Type: iceberg.DecimalTypeOf(38, 10)},
		iceberg.NestedField{ID: 9, Name: "dt", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 10, Name: "tm", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 11, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 12, Name: "tstz", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 13, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 14, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 15, Name: "fx", Type: iceberg.FixedTypeOf(4)},
		iceberg.NestedField{ID: 16, Name: "bin", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 17, Name: "loc", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 19, Name: "lat", Type: iceberg.PrimitiveTypes.Float64},
		}}},
		iceberg.NestedField{ID: 18, Name: "tags", Type: &iceberg.ListType{ElementID: 20, Element: iceberg.PrimitiveTypes.String}},
	)
}

func twoSpecs(t testing.TB, sc *iceberg.Schema) []iceberg.PartitionSpec {
	t.Helper()
	s0 := iceberg.NewPartitionSpecID(0, iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "i", Transform: iceberg.IdentityTransform{}})
	s1 := iceberg.NewPartitionSpecID(1,
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "i", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{9}, FieldID: 1001, Name: "dt_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{13}, FieldID: 1002, Name: "s_bucket", Transform: iceberg.BucketTransform{NumBuckets: 8}})
	return []iceberg.PartitionSpec{s0, s1}
}

func dec(v int64, scale int) iceberg.Decimal {
	return iceberg.Decimal{Val: decimal128.FromI64(v), Scale: scale}
}

func bounds(lo, hi any) *FieldStats {
	return &FieldStats{LowerBound: lo, UpperBound: hi, TightBounds: ptr(true), ValueCount: ptr(int64(100)), NullValueCount: ptr(int64(3))}
}

func fullStats() map[int]*FieldStats {
	u1, u2 := uuid.MustParse("00000000-0000-0000-0000-000000000001"), uuid.MustParse("ffffffff-0000-0000-0000-000000000002")
	st := map[int]*FieldStats{
		1:  bounds(false, true),
		2:  bounds(int32(-5), int32(99)),
		3:  bounds(int64(-1), int64(1<<40)),
		4:  {LowerBound: float32(-1.5), UpperBound: float32(2.5), NaNValueCount: ptr(int64(1)), ValueCount: ptr(int64(100))},
		5:  {LowerBound: -2.25, UpperBound: 9.75, NaNValueCount: ptr(int64(0))},
		6:  bounds(dec(-12345, 2), dec(99999, 2)),
		7:  bounds(dec(-1, 4), dec(1_000_000_000, 4)),
		8:  bounds(dec(-7, 10), dec(123456789012345678, 10)),
		9:  bounds(iceberg.Date(19000), iceberg.Date(20000)),
		10: bounds(iceberg.Time(1_000_000), iceberg.Time(86_399_000_000)),
		11: bounds(iceberg.Timestamp(1_700_000_000_000_000), iceberg.Timestamp(1_800_000_000_000_000)),
		12: bounds(iceberg.Timestamp(1_600_000_000_000_000), iceberg.Timestamp(1_900_000_000_000_000)),
		13: {LowerBound: "apple", UpperBound: "zebra", AvgValueSizeInBytes: ptr(int32(7)), TightBounds: ptr(false)},
		14: bounds(u1, u2),
		15: bounds([]byte{0, 0, 0, 1}, []byte{9, 9, 9, 9}),
		16: {LowerBound: []byte{0x00}, UpperBound: []byte{0xff, 0xfe}, AvgValueSizeInBytes: ptr(int32(2))},
		19: bounds(-90.0, 90.0),
	}
	return st
}

func sampleRows() []TrackedFile {
	seq5, snap7 := ptr(int64(5)), ptr(int64(7))
	return []TrackedFile{
		{ // ADDED, everything filled, spec 1 partition
			Tracking: Tracking{Status: StatusAdded, SnapshotID: snap7, SequenceNumber: seq5, FileSequenceNumber: seq5,
				DVSnapshotID: snap7, FirstRowID: ptr(int64(1000)), LatestColumnFileSnapshotID: snap7},
			ContentType: ContentData, FormatVersion: 4, Location: "s3://b/t/data/a.parquet", FileFormat: "parquet",
			RecordCount: 100, FileSizeInBytes: 4096, SpecID: ptr(int32(1)),
			Partition:    map[int]any{1000: int32(7), 1001: iceberg.Date(19500), 1002: int32(3)},
			ContentStats: fullStats(), SortOrderID: ptr(int32(1)),
			DeletionVector: &DeletionVector{Location: "s3://b/t/data/dv.puffin", Offset: 4, SizeInBytes: 40, Cardinality: 3, KeyMetadata: []byte{1, 2}},
			KeyMetadata:    []byte("km"), SplitOffsets: []int64{4, 1024},
			ColumnFiles: []ColumnFile{
				{FormatVersion: 4, FieldIDs: []int32{3, 5}, Location: "s3://b/t/data/cf1.parquet", FileFormat: "parquet", FileSizeInBytes: 300, KeyMetadata: []byte{7}, SplitOffsets: []int64{4}},
				{FormatVersion: 4, FieldIDs: []int32{13}, Location: "s3://b/t/data/cf2.parquet", FileFormat: "parquet", FileSizeInBytes: 200},
			},
		},
		{ // EXISTING from spec 0 with a partial partition and some stats
			Tracking:    Tracking{Status: StatusExisting, SnapshotID: ptr(int64(1)), SequenceNumber: ptr(int64(1)), FileSequenceNumber: ptr(int64(1)), FirstRowID: ptr(int64(0))},
			ContentType: ContentData, FormatVersion: 4, Location: "s3://b/t/data/b.parquet", FileFormat: "parquet",
			RecordCount: 10, FileSizeInBytes: 100, SpecID: ptr(int32(0)),
			Partition:    map[int]any{1000: int32(1), 1001: nil, 1002: nil},
			ContentStats: map[int]*FieldStats{2: bounds(int32(1), int32(1))},
		},
		{ // REPLACED and MODIFIED pair
			Tracking:    Tracking{Status: StatusReplaced, SnapshotID: ptr(int64(9)), SequenceNumber: ptr(int64(2)), FileSequenceNumber: ptr(int64(2)), FirstRowID: ptr(int64(10))},
			ContentType: ContentData, FormatVersion: 4, Location: "s3://b/t/data/c.parquet", FileFormat: "parquet", RecordCount: 5, FileSizeInBytes: 50,
		},
		{
			Tracking: Tracking{Status: StatusModified, SnapshotID: ptr(int64(2)), SequenceNumber: ptr(int64(9)), FileSequenceNumber: ptr(int64(2)),
				FirstRowID: ptr(int64(10)), LatestColumnFileSnapshotID: ptr(int64(9))},
			ContentType: ContentData, FormatVersion: 4, Location: "s3://b/t/data/c.parquet", FileFormat: "parquet", RecordCount: 5, FileSizeInBytes: 50,
			ColumnFiles: []ColumnFile{{FormatVersion: 4, FieldIDs: []int32{2}, Location: "s3://b/t/data/cf3.parquet", FileFormat: "parquet", FileSizeInBytes: 9}},
		},
	}
}

func writeAll(t testing.TB, opts WriterOptions, rows []TrackedFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opts)
	require.NoError(t, err)
	for i := range rows {
		require.NoError(t, w.Write(&rows[i]))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func readAll(t testing.TB, data []byte, opts ReaderOptions) []TrackedFile {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), opts)
	require.NoError(t, err)
	defer r.Close()
	rows, err := r.All(context.Background())
	require.NoError(t, err)
	return rows
}

func TestRoundTripEveryField(t *testing.T) {
	sc := allTypesSchema()
	rows := sampleRows()
	data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, SchemaID: 3, Specs: twoSpecs(t, sc), BatchRows: 3}, rows)
	got := readAll(t, data, ReaderOptions{})
	require.Equal(t, len(rows), len(got))
	for i := range rows {
		require.Equal(t, rows[i], got[i], "row %d", i)
	}
	r, err := NewReader(bytes.NewReader(data), ReaderOptions{})
	require.NoError(t, err)
	md := r.Metadata()
	require.Equal(t, "4", md["format-version"])
	require.Equal(t, "data", md["content"])
	require.Equal(t, "3", md["schema-id"])
	require.Contains(t, md, "iceberg.schema")
}

func TestRelativeLocations(t *testing.T) {
	sc := allTypesSchema()
	rows := sampleRows()[:1]
	data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc), TableLocation: "s3://b/t"}, rows)
	raw := readAll(t, data, ReaderOptions{})
	require.Equal(t, "data/a.parquet", raw[0].Location, "stored relative to the table")
	require.Equal(t, "data/dv.puffin", raw[0].DeletionVector.Location)
	require.Equal(t, "data/cf1.parquet", raw[0].ColumnFiles[0].Location)
	resolved := readAll(t, data, ReaderOptions{TableLocation: "s3://b/t/"})
	require.Equal(t, rows[0], resolved[0])

	require.Equal(t, "gs://other/x.parquet", Relativize("s3://b/t", "gs://other/x.parquet"))
	require.Equal(t, "s3://b/t2/x", Relativize("s3://b/t", "s3://b/t2/x"), "a sibling prefix is not below the table")
	require.Equal(t, "s3://b/t//x", Relativize("s3://b/t", "s3://b/t//x"), "never write a relative path starting with /")
	require.Equal(t, "s3://b/t/x", Resolve("s3://b/t", "x"))
	require.Equal(t, "file:/abs", Resolve("s3://b/t", "file:/abs"))
}

func TestProjectionReadsOnlyAskedColumns(t *testing.T) {
	sc := allTypesSchema()
	data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc)}, sampleRows())
	got := readAll(t, data, ReaderOptions{Columns: []int{IDLocation, IDTracking}})
	require.Len(t, got, 4)
	require.Equal(t, "s3://b/t/data/a.parquet", got[0].Location)
	require.Equal(t, StatusReplaced, got[2].Tracking.Status)
	require.Nil(t, got[0].ContentStats, "stats were not projected")
	require.Nil(t, got[0].ColumnFiles)
	require.Zero(t, got[0].RecordCount)
}

func TestStatsFieldsNarrowContentStats(t *testing.T) {
	sc := allTypesSchema()
	rows := sampleRows()
	data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc)}, rows)
	all := readAll(t, data, ReaderOptions{})
	var withStats []int
	for id := range all[0].ContentStats {
		withStats = append(withStats, id)
	}
	require.GreaterOrEqual(t, len(withStats), 2, "the sample needs stats on two fields at least")
	keep := withStats[0]

	one := readAll(t, data, ReaderOptions{StatsFields: []int{keep}})
	require.Len(t, one, len(all))
	for i := range one {
		want := all[i]
		if all[i].ContentStats != nil {
			want.ContentStats = map[int]*FieldStats{}
			if s := all[i].ContentStats[keep]; s != nil {
				want.ContentStats[keep] = s
			}
		}
		require.Equal(t, want, one[i], "row %d: only field %d's stats, everything else as in a full read", i, keep)
	}

	none := readAll(t, data, ReaderOptions{StatsFields: []int{}})
	for i := range none {
		want := all[i]
		want.ContentStats = nil
		require.Equal(t, want, none[i], "row %d: no stats, everything else as in a full read", i)
	}
}

func TestFooterReuse(t *testing.T) {
	sc := allTypesSchema()
	data := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc)}, sampleRows())
	r, err := NewReader(bytes.NewReader(data), ReaderOptions{})
	require.NoError(t, err)
	want, err := r.All(context.Background())
	require.NoError(t, err)
	footer := r.Footer()
	require.Positive(t, r.FooterSize())
	require.NoError(t, r.Close())

	// The footer alone describes the file: a reader given it and a
	// source whose footer bytes are zeroed still reads every row, so it
	// did not parse them again.
	blanked := bytes.Clone(data)
	clear(blanked[len(blanked)-8-r.FooterSize() : len(blanked)-8])
	_, err = NewReader(bytes.NewReader(blanked), ReaderOptions{})
	require.ErrorIs(t, err, ErrMalformed, "without the footer, the blanked file is unreadable")
	got := readAll(t, blanked, ReaderOptions{Footer: footer})
	require.Equal(t, want, got)

	// Readers share a footer across goroutines (run with -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := NewReader(bytes.NewReader(data), ReaderOptions{Footer: footer, StatsFields: []int{}})
			if err == nil {
				_, err = r.All(context.Background())
			}
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
}

func TestEmptyStructsAreOmitted(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "tags", Type: &iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.String}})
	as, err := ArrowSchema(sc, []iceberg.PartitionSpec{*iceberg.UnpartitionedSpec}, false)
	require.NoError(t, err)
	for _, f := range as.Fields() {
		require.NotEqual(t, IDPartition, fieldID(f), "unpartitioned: no partition column")
		require.NotEqual(t, IDContentStats, fieldID(f), "no stats-eligible field: no content_stats column")
	}
}

func TestRootManifestAndInheritance(t *testing.T) {
	leafRows := []TrackedFile{
		{Tracking: Tracking{Status: StatusAdded}, ContentType: ContentData, FormatVersion: 4, Location: "a", FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: 1},
		{Tracking: Tracking{Status: StatusAdded}, ContentType: ContentData, FormatVersion: 4, Location: "b", FileFormat: "parquet", RecordCount: 5, FileSizeInBytes: 1},
		{Tracking: Tracking{Status: StatusExisting, SnapshotID: ptr(int64(1)), SequenceNumber: ptr(int64(1)), FileSequenceNumber: ptr(int64(1)), FirstRowID: ptr(int64(0))},
			ContentType: ContentData, FormatVersion: 4, Location: "c", FileFormat: "parquet", RecordCount: 7, FileSizeInBytes: 1},
	}
	leaf := writeAll(t, WriterOptions{Content: ContentDataLeaf}, leafRows)
	mi := ComputeManifestInfo([]TrackedFile{leafRows[2], {Tracking: Tracking{Status: StatusAdded, SequenceNumber: ptr(int64(4))}, RecordCount: 15}})
	rootRow := TrackedFile{
		Tracking:    Tracking{Status: StatusAdded, SnapshotID: ptr(int64(4)), SequenceNumber: ptr(int64(4)), FileSequenceNumber: ptr(int64(4)), FirstRowID: ptr(int64(100))},
		ContentType: ContentDataManifest, FormatVersion: 4, Location: "metadata/leaf-m0.parquet", FileFormat: "parquet",
		RecordCount: 3, FileSizeInBytes: int64(len(leaf)), ManifestInfo: &mi,
	}
	root := writeAll(t, WriterOptions{Content: ContentRoot}, []TrackedFile{rootRow})
	roots := readAll(t, root, ReaderOptions{})
	require.Equal(t, rootRow, roots[0])
	got := readAll(t, leaf, ReaderOptions{InheritFrom: &roots[0]})
	require.Equal(t, int64(4), *got[0].Tracking.SnapshotID)
	require.Equal(t, int64(4), *got[0].Tracking.SequenceNumber)
	require.Equal(t, int64(4), *got[0].Tracking.FileSequenceNumber)
	require.Equal(t, int64(100), *got[0].Tracking.FirstRowID)
	require.Equal(t, int64(110), *got[1].Tracking.FirstRowID, "100 + 10 rows of the first inheriting file")
	require.Equal(t, int64(1), *got[2].Tracking.SnapshotID, "explicit values are kept")
	require.Equal(t, int64(0), *got[2].Tracking.FirstRowID)
}

// TestManifestDVMasksLeafRows: a root row's manifest deletion vector
// survives the root's round trip, and a leaf read for that row leaves the
// masked rows out (they still count for inherited first row ids), gives
// each row its position, and keeps them all on request. A DV that is not
// a bitmap is a malformed manifest.
func TestManifestDVMasksLeafRows(t *testing.T) {
	leafRows := []TrackedFile{
		{Tracking: Tracking{Status: StatusAdded}, ContentType: ContentData, FormatVersion: 4, Location: "a", FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: 1},
		{Tracking: Tracking{Status: StatusAdded}, ContentType: ContentData, FormatVersion: 4, Location: "b", FileFormat: "parquet", RecordCount: 5, FileSizeInBytes: 1},
		{Tracking: Tracking{Status: StatusAdded}, ContentType: ContentData, FormatVersion: 4, Location: "c", FileFormat: "parquet", RecordCount: 7, FileSizeInBytes: 1},
	}
	leaf := writeAll(t, WriterOptions{Content: ContentDataLeaf}, leafRows)
	dv, err := mumbling.Encode([]uint32{1})
	require.NoError(t, err)
	mi := ComputeManifestInfo(leafRows)
	mi.DV = dv
	rootRow := TrackedFile{
		Tracking: Tracking{Status: StatusModified, SnapshotID: ptr(int64(4)), SequenceNumber: ptr(int64(4)), FileSequenceNumber: ptr(int64(4)),
			FirstRowID: ptr(int64(100)), DVSnapshotID: ptr(int64(5)), ReplacedPositions: dv},
		ContentType: ContentDataManifest, FormatVersion: 4, Location: "m.parquet", FileFormat: "parquet", RecordCount: 3, FileSizeInBytes: int64(len(leaf)),
		ManifestInfo: &mi,
	}
	roots := readAll(t, writeAll(t, WriterOptions{Content: ContentRoot}, []TrackedFile{rootRow}), ReaderOptions{})
	require.Equal(t, rootRow, roots[0])
	got := readAll(t, leaf, ReaderOptions{InheritFrom: &roots[0]})
	require.Len(t, got, 2)
	require.Equal(t, []string{"a", "c"}, []string{got[0].Location, got[1].Location})
	require.Equal(t, []int64{0, 2}, []int64{got[0].Pos, got[1].Pos})
	require.Equal(t, int64(115), *got[1].Tracking.FirstRowID, "the masked row's 5 rows still count")
	all := readAll(t, leaf, ReaderOptions{InheritFrom: &roots[0], IncludeMasked: true})
	require.Len(t, all, 3)
	some := readAll(t, leaf, ReaderOptions{InheritFrom: &roots[0], Positions: map[int64]bool{2: true}})
	require.Len(t, some, 1, "only the row asked for")
	require.Equal(t, "c", some[0].Location)
	require.Equal(t, int64(115), *some[0].Tracking.FirstRowID, "rows not asked for still count for inheritance")
	replaced, err := roots[0].ReplacedInSnapshot()
	require.NoError(t, err)
	require.Equal(t, map[int64]bool{1: true}, replaced)

	bad := roots[0]
	bad.ManifestInfo = &ManifestInfo{DV: []byte{1, 1, 0, 0, 1, 0}}
	r, err := NewReader(bytes.NewReader(leaf), ReaderOptions{InheritFrom: &bad})
	require.NoError(t, err)
	_, err = r.All(context.Background())
	require.ErrorIs(t, err, ErrMalformed)
}

func TestWriterRejectsInvalidRows(t *testing.T) {
	base := func() TrackedFile {
		return TrackedFile{Tracking: Tracking{Status: StatusAdded}, ContentType: ContentData, FormatVersion: 4, Location: "x", FileFormat: "parquet"}
	}
	cases := map[string]struct {
		content Content
		mut     func(*TrackedFile)
	}{
		"manifest row in leaf":    {ContentDataLeaf, func(tf *TrackedFile) { tf.ContentType = ContentDataManifest; tf.ManifestInfo = &ManifestInfo{} }},
		"data row in delete leaf": {ContentDeleteLeaf, func(*TrackedFile) {}},
		"position deletes":        {ContentDataLeaf, func(tf *TrackedFile) { tf.ContentType = 1 }},
		"root without snapshot":   {ContentRoot, func(*TrackedFile) {}},
		"manifest without info": {ContentRoot, func(tf *TrackedFile) {
			tf.ContentType = ContentDataManifest
			tf.Tracking.SnapshotID, tf.Tracking.SequenceNumber = ptr(int64(1)), ptr(int64(1))
		}},
		"eq deletes without ids": {ContentDeleteLeaf, func(tf *TrackedFile) { tf.ContentType = ContentEqualityDeletes }},
		"empty column file ids": {ContentDataLeaf, func(tf *TrackedFile) {
			tf.Tracking.LatestColumnFileSnapshotID = ptr(int64(1))
			tf.ColumnFiles = []ColumnFile{{FormatVersion: 4, Location: "c"}}
		}},
		"duplicate column file ids": {ContentDataLeaf, func(tf *TrackedFile) {
			tf.Tracking.LatestColumnFileSnapshotID = ptr(int64(1))
			tf.ColumnFiles = []ColumnFile{{FormatVersion: 4, FieldIDs: []int32{2, 2}, Location: "c"}}
		}},
		"column files without snapshot": {ContentDataLeaf, func(tf *TrackedFile) {
			tf.ColumnFiles = []ColumnFile{{FormatVersion: 4, FieldIDs: []int32{2}, Location: "c"}}
		}},
		"positions on data row":  {ContentDataLeaf, func(tf *TrackedFile) { tf.Tracking.DeletedPositions = []byte{1} }},
		"stats of unknown field": {ContentDataLeaf, func(tf *TrackedFile) { tf.ContentStats = map[int]*FieldStats{99: {}} }},
		"wrong bound type":       {ContentDataLeaf, func(tf *TrackedFile) { tf.ContentStats = map[int]*FieldStats{2: {LowerBound: "x"}} }},
		"stats of struct field":  {ContentDataLeaf, func(tf *TrackedFile) { tf.ContentStats = map[int]*FieldStats{17: {}} }},
		"int bound on a long": {ContentDataLeaf, func(tf *TrackedFile) {
			tf.ContentStats = map[int]*FieldStats{2: bounds(int32(1), int32(2)), 3: {UpperBound: int32(3)}}
		}},
		"stats after good stats": {ContentDataLeaf, func(tf *TrackedFile) {
			tf.ContentStats = map[int]*FieldStats{2: bounds(int32(1), int32(2)), 13: {UpperBound: int64(3)}}
		}},
		"wrong partition type": {ContentDataLeaf, func(tf *TrackedFile) {
			tf.SpecID = ptr(int32(0))
			tf.Partition = map[int]any{1000: "seven"}
		}},
		"unknown partition field": {ContentDataLeaf, func(tf *TrackedFile) { tf.Partition = map[int]any{1000: int32(1), 4242: int32(1)} }},
	}
	sc := allTypesSchema()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, WriterOptions{Content: c.content, Schema: sc, Specs: twoSpecs(t, sc)})
			require.NoError(t, err)
			tf := base()
			c.mut(&tf)
			require.ErrorIs(t, w.Write(&tf), ErrInvalidRow)
			// Nothing of the refused row was appended: a valid row after
			// it writes, Close does not panic, and one row reads back.
			if c.content == ContentDataLeaf {
				good := base()
				require.NoError(t, w.Write(&good))
				require.NoError(t, w.Close())
				require.Len(t, readAll(t, buf.Bytes(), ReaderOptions{}), 1)
			} else {
				require.NoError(t, w.Close())
			}
		})
	}
}

func TestModelHelpers(t *testing.T) {
	for _, st := range []Status{StatusAdded, StatusExisting, StatusModified} {
		tf, err := CarryForward(TrackedFile{Tracking: Tracking{Status: st, SequenceNumber: ptr(int64(3))}})
		require.NoError(t, err)
		require.Equal(t, StatusExisting, tf.Tracking.Status)
		require.Equal(t, int64(3), *tf.Tracking.SequenceNumber, "values stay explicit")
	}
	for _, st := range []Status{StatusDeleted, StatusReplaced} {
		_, err := CarryForward(TrackedFile{Tracking: Tracking{Status: st}})
		require.ErrorIs(t, err, ErrTerminal)
	}
	mi := ComputeManifestInfo([]TrackedFile{
		{Tracking: Tracking{Status: StatusAdded, SequenceNumber: ptr(int64(7))}, RecordCount: 10},
		{Tracking: Tracking{Status: StatusExisting, SequenceNumber: ptr(int64(3))}, RecordCount: 5},
		{Tracking: Tracking{Status: StatusReplaced, SequenceNumber: ptr(int64(1))}, RecordCount: 2},
		{Tracking: Tracking{Status: StatusModified, SequenceNumber: ptr(int64(9))}, RecordCount: 2},
		{Tracking: Tracking{Status: StatusDeleted, SequenceNumber: ptr(int64(1))}, RecordCount: 4},
	})
	require.Equal(t, ManifestInfo{AddedFiles: 1, ExistingFiles: 1, ReplacedFiles: 1, ModifiedFiles: 1, DeletedFiles: 1,
		AddedRows: 10, ExistingRows: 5, ReplacedRows: 2, ModifiedRows: 2, DeletedRows: 4, MinSequenceNumber: 3}, mi,
		"min sequence number counts live rows only")
}

func TestAggregateStats(t *testing.T) {
	rows := []TrackedFile{
		{Tracking: Tracking{Status: StatusAdded}, ContentStats: map[int]*FieldStats{
			2:  {LowerBound: int32(5), UpperBound: int32(9), TightBounds: ptr(true), ValueCount: ptr(int64(10)), NullValueCount: ptr(int64(1))},
			13: {LowerBound: "m", UpperBound: "q", AvgValueSizeInBytes: ptr(int32(4)), ValueCount: ptr(int64(10))},
		}},
		{Tracking: Tracking{Status: StatusExisting}, ContentStats: map[int]*FieldStats{
			2:  {LowerBound: int32(-3), UpperBound: int32(7), TightBounds: ptr(true), ValueCount: ptr(int64(5)), NullValueCount: ptr(int64(0))},
			13: {LowerBound: "a", ValueCount: ptr(int64(30)), AvgValueSizeInBytes: ptr(int32(8))},
		}},
		{Tracking: Tracking{Status: StatusReplaced}, ContentStats: map[int]*FieldStats{ // not live: ignored
			2: {LowerBound: int32(-100), UpperBound: int32(100)},
		}},
	}
	agg, err := AggregateStats(rows)
	require.NoError(t, err)
	require.Equal(t, int32(-3), agg[2].LowerBound)
	require.Equal(t, int32(9), agg[2].UpperBound)
	require.True(t, *agg[2].TightBounds)
	require.Equal(t, int64(15), *agg[2].ValueCount)
	require.Equal(t, int64(1), *agg[2].NullValueCount)
	require.Equal(t, "a", agg[13].LowerBound)
	require.Nil(t, agg[13].UpperBound, "one live row has no upper bound: unknown")
	require.Nil(t, agg[13].NullValueCount)
	require.Equal(t, int32(7), *agg[13].AvgValueSizeInBytes, "(4*10 + 8*30) / 40")
}

// TestStatsDoNotLeakBetweenRows writes rows whose stats differ in which
// fields they cover, alternating with empty and nil stats: each row must
// read back as written alone (the writer keeps per-row stats state).
func TestStatsDoNotLeakBetweenRows(t *testing.T) {
	sc := allTypesSchema()
	full := sampleRows()[0]
	partial := full
	partial.Location = full.Location + "-partial"
	partial.ContentStats = map[int]*FieldStats{1: full.ContentStats[1]}
	empty := full
	empty.Location = full.Location + "-empty"
	empty.ContentStats = map[int]*FieldStats{}
	none := full
	none.Location = full.Location + "-none"
	none.ContentStats = nil
	rows := []TrackedFile{full, empty, partial, none, full}
	opts := WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc), BatchRows: 2}
	got := readAll(t, writeAll(t, opts, rows), ReaderOptions{})
	require.Len(t, got, len(rows))
	for i, r := range rows {
		alone := readAll(t, writeAll(t, opts, []TrackedFile{r}), ReaderOptions{})
		require.Equal(t, alone[0], got[i], "row %d", i)
	}
	require.Len(t, got[2].ContentStats, 1, "partial stats read back partial")
}

// TestPositionsReadMatchesFullRead reads rows at chosen positions of a leaf
// of every kind of row (several row groups, lists, nulls, rows that inherit
// their first row id, some masked) and expects exactly the rows a full read
// returns at those positions.
func TestPositionsReadMatchesFullRead(t *testing.T) {
	sc := allTypesSchema()
	rows := concurrentRows(1, 1300)
	for i := range rows {
		if i%3 != 0 && rows[i].ContentType == ContentData {
			rows[i].Tracking.FirstRowID = nil // inherited
			rows[i].Tracking.SnapshotID = nil
		}
	}
	leaf := writeAll(t, WriterOptions{Content: ContentDataLeaf, Schema: sc, Specs: twoSpecs(t, sc), RowGroupRows: 500}, rows)
	dv, err := mumbling.Encode([]uint32{5, 501, 777})
	require.NoError(t, err)
	mi := ComputeManifestInfo(rows)
	mi.DV = dv
	root := TrackedFile{
		Tracking:    Tracking{Status: StatusModified, SnapshotID: ptr(int64(9)), SequenceNumber: ptr(int64(9)), FileSequenceNumber: ptr(int64(9)), FirstRowID: ptr(int64(1 << 20))},
		ContentType: ContentDataManifest, FormatVersion: 4, Location: "m.parquet", FileFormat: "parquet", RecordCount: int64(len(rows)), FileSizeInBytes: int64(len(leaf)),
		ManifestInfo: &mi,
	}
	full := readAll(t, leaf, ReaderOptions{InheritFrom: &root, IncludeMasked: true})
	require.Len(t, full, len(rows))
	for _, c := range []struct {
		name          string
		positions     []int64
		includeMasked bool
	}{
		{"first", []int64{0}, false},
		{"last", []int64{1299}, false},
		{"across row groups", []int64{3, 499, 500, 998, 1001, 1250}, false},
		{"masked left out", []int64{5, 6, 777}, false},
		{"masked kept", []int64{5, 6, 777}, true},
		{"none", nil, false},
		{"past the end", []int64{1300, 2}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := []TrackedFile{}
			set := map[int64]bool{}
			for _, p := range c.positions {
				set[p] = true
				if p < int64(len(full)) && (c.includeMasked || (p != 5 && p != 777)) {
					want = append(want, full[p])
				}
			}
			got := readAll(t, leaf, ReaderOptions{InheritFrom: &root, Positions: set, IncludeMasked: c.includeMasked})
			if got == nil {
				got = []TrackedFile{}
			}
			require.Equal(t, want, got)
		})
	}
}
