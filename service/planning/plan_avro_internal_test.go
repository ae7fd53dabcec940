package planning

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

// planFix is a v1–v3 table whose manifests are written by hand in a
// file:// warehouse, so that every delete-file kind can be planned without
// a writer that produces it. The planner needs no catalog database: the
// warehouse is a value, and the table's files are those of its location.
type planFix struct {
	t       *testing.T
	pl      *Planner
	w       *store.Warehouse
	loc     string
	md      table.Metadata
	version int
}

func newPlanFix(t *testing.T, version int) *planFix {
	whLoc := "file://" + filepath.Join(t.TempDir(), "warehouse")
	w := &store.Warehouse{Name: "wh", Location: whLoc}
	pl := New(Deps{Tables: tableaccess.New(tableaccess.Options{Files: storage.NewProvider()})})
	schema := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "category", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "day", Type: iceberg.PrimitiveTypes.Date, Required: true})
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "category", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "day", Transform: iceberg.IdentityTransform{}})
	loc := whLoc + "/ns/t"
	md, err := table.NewMetadata(schema, &spec, table.UnsortedSortOrder, loc, iceberg.Properties{"format-version": strconv.Itoa(version)})
	require.NoError(t, err)
	return &planFix{t: t, pl: pl, w: w, loc: loc, md: md, version: version}
}

const day0 = iceberg.Date(19724) // 2024-01-02

func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

// data is a Parquet data file of partition (cat, day0) holding ids lo..hi.
func (f *planFix) data(name, cat string, lo, hi int64) iceberg.DataFile {
	b, err := iceberg.NewDataFileBuilder(f.md.PartitionSpec(), iceberg.EntryContentData, f.loc+"/data/"+name, iceberg.ParquetFile,
		map[int]any{1000: cat, 1001: day0}, nil, nil, hi-lo+1, 1000+hi)
	require.NoError(f.t, err)
	return b.LowerBoundValues(map[int][]byte{1: le64(lo)}).UpperBoundValues(map[int][]byte{1: le64(hi)}).Build()
}

func (f *planFix) deletes(content iceberg.ManifestEntryContent, name, cat string, rows int64, set func(*iceberg.DataFileBuilder)) iceberg.DataFile {
	format := iceberg.ParquetFile
	if set == nil {
		set = func(*iceberg.DataFileBuilder) {}
	}
	if content == iceberg.EntryContentPosDeletes && f.version >= 3 {
		format = iceberg.PuffinFile
	}
	b, err := iceberg.NewDataFileBuilder(f.md.PartitionSpec(), content, f.loc+"/data/"+name, format,
		map[int]any{1000: cat, 1001: day0}, nil, nil, rows, 500+rows)
	require.NoError(f.t, err)
	set(b)
	return b.Build()
}

// commit adds a snapshot with op whose new manifests hold added and
// deletes, keeping the current snapshot's manifests; mlDir overrides where
// the manifest list goes. It returns the snapshot id.
func (f *planFix) commit(op table.Operation, added, deletes []iceberg.DataFile, mlDir ...string) int64 {
	t := f.t
	ctx := context.Background()
	fio, err := f.pl.d.Tables.Files().IcebergIO(ctx, f.loc, nil)
	require.NoError(t, err)
	wio := fio.(icebergio.WriteFileIO)
	seq := f.md.LastSequenceNumber() + 1
	snapID := 1000 + seq
	var parent *int64
	var manifests []iceberg.ManifestFile
	if cur := f.md.CurrentSnapshot(); cur != nil {
		parent = &cur.SnapshotID
		manifests, err = cur.Manifests(fio)
		require.NoError(t, err)
	}
	write := func(files []iceberg.DataFile, content iceberg.ManifestContent) {
		if len(files) == 0 {
			return
		}
		var buf bytes.Buffer
		mw, err := iceberg.NewManifestWriter(f.version, &buf, f.md.PartitionSpec(), f.md.CurrentSchema(), snapID, iceberg.WithManifestWriterContent(content))
		require.NoError(t, err)
		for _, df := range files {
			require.NoError(t, mw.Add(iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &snapID, nil, nil, df)))
		}
		require.NoError(t, mw.Close())
		path := fmt.Sprintf("%s/metadata/m-%d-%d.avro", f.loc, snapID, content)
		mf, err := mw.ToManifestFile(path, int64(buf.Len()))
		require.NoError(t, err)
		require.NoError(t, wio.WriteFile(path, buf.Bytes()))
		manifests = append(manifests, mf)
	}
	write(added, iceberg.ManifestContentData)
	write(deletes, iceberg.ManifestContentDeletes)
	dir := f.loc + "/metadata"
	if len(mlDir) > 0 {
		dir = mlDir[0]
	}
	mlPath := fmt.Sprintf("%s/snap-%d.avro", dir, snapID)
	var buf bytes.Buffer
	firstRow := f.md.NextRowID()
	var nextRow *int64
	switch f.version {
	case 3:
		lw, err := iceberg.NewManifestListWriterV3(&buf, snapID, seq, firstRow, parent)
		require.NoError(t, err)
		require.NoError(t, lw.AddManifests(manifests))
		require.NoError(t, lw.Close())
		nextRow = lw.NextRowID()
	default:
		require.NoError(t, iceberg.WriteManifestList(f.version, &buf, snapID, parent, &seq, 0, manifests))
	}
	require.NoError(t, wio.WriteFile(mlPath, buf.Bytes()))
	schemaID := f.md.CurrentSchema().ID
	snap := table.Snapshot{SnapshotID: snapID, ParentSnapshotID: parent, SequenceNumber: seq, TimestampMs: time.Now().UnixMilli(),
		ManifestList: mlPath, Summary: &table.Summary{Operation: op}, SchemaID: &schemaID}
	if f.version >= 3 {
		added := *nextRow - firstRow
		snap.FirstRowID, snap.AddedRows = &firstRow, &added
	}
	b, err := table.MetadataBuilderFromBase(f.md, "")
	require.NoError(t, err)
	require.NoError(t, b.AddSnapshot(&snap))
	require.NoError(t, b.SetSnapshotRef(table.MainBranch, snapID, table.BranchRef))
	f.md, err = b.Build()
	require.NoError(t, err)
	return snapID
}

func (f *planFix) plan(req Request) (Result, error) {
	req.CaseSensitive = req.CaseSensitive || req.Filter == nil
	return f.pl.planAvro(context.Background(), f.w, f.md, req)
}

// files lists the planned data files by base name, sorted.
func files(r Result) []string {
	var out []string
	for _, t := range r.Tasks {
		out = append(out, filepath.Base(t.Location))
	}
	slices.Sort(out)
	return out
}

func taskOf(t *testing.T, r Result, name string) ScanTask {
	for _, tk := range r.Tasks {
		if filepath.Base(tk.Location) == name {
			return tk
		}
	}
	t.Fatalf("no task for %s in %v", name, files(r))
	return ScanTask{}
}

func TestPlanAvroV2Deletes(t *testing.T) {
	f := newPlanFix(t, 2)
	s1 := f.commit(table.OpAppend, []iceberg.DataFile{f.data("a1.parquet", "a", 1, 10), f.data("b1.parquet", "b", 11, 20)}, nil)
	pos := f.deletes(iceberg.EntryContentPosDeletes, "a1-pos.parquet", "a", 2, func(b *iceberg.DataFileBuilder) {
		b.ReferencedDataFile(f.loc + "/data/a1.parquet")
	})
	eq := f.deletes(iceberg.EntryContentEqDeletes, "b-eq.parquet", "b", 3, func(b *iceberg.DataFileBuilder) { b.EqualityFieldIDs([]int{1}) })
	f.commit(table.OpDelete, nil, []iceberg.DataFile{pos, eq})

	r, err := f.plan(Request{})
	require.NoError(t, err)
	require.Equal(t, []string{"a1.parquet", "b1.parquet"}, files(r))
	require.Len(t, r.DeleteFiles, 2)
	a1, b1 := taskOf(t, r, "a1.parquet"), taskOf(t, r, "b1.parquet")
	require.Equal(t, []any{"a", "2024-01-02"}, a1.PartitionValues, "partition values in spec order, dates as ISO text")
	require.Equal(t, int64(10), a1.RecordCount)
	require.Equal(t, int64(1010), a1.FileSizeInBytes)
	require.Equal(t, "parquet", a1.FileFormat)
	require.Len(t, a1.DeleteRefs, 1)
	require.Len(t, b1.DeleteRefs, 1)
	pd, ed := r.DeleteFiles[a1.DeleteRefs[0]], r.DeleteFiles[b1.DeleteRefs[0]]
	require.Equal(t, "position-deletes", pd.Content)
	require.Equal(t, f.loc+"/data/a1-pos.parquet", pd.Location)
	require.Equal(t, int64(2), pd.RecordCount)
	// (iceberg-go's v2 manifest writer drops referenced_data_file, so
	// it is checked on the v3 deletion vector only.)
	require.Equal(t, "equality-deletes", ed.Content)
	require.Equal(t, []int{1}, ed.EqualityIDs)
	require.Equal(t, []any{"b", "2024-01-02"}, ed.PartitionValues)

	// A partition filter prunes b1 and its delete file.
	r, err = f.plan(Request{Filter: []byte(`{"type":"eq","term":"category","value":"a"}`)})
	require.NoError(t, err)
	require.Equal(t, []string{"a1.parquet"}, files(r))
	require.Len(t, r.DeleteFiles, 1)
	require.Equal(t, "position-deletes", r.DeleteFiles[0].Content)

	// Column metrics prune a1 (ids 1..10).
	r, err = f.plan(Request{Filter: []byte(`{"type":"gt","term":"id","value":15}`)})
	require.NoError(t, err)
	require.Equal(t, []string{"b1.parquet"}, files(r))

	// Case-insensitive names bind; case-sensitive ones must match.
	r, err = f.plan(Request{Filter: []byte(`{"type":"eq","term":"CATEGORY","value":"b"}`), CaseSensitive: false})
	require.NoError(t, err)
	require.Equal(t, []string{"b1.parquet"}, files(r))
	_, err = f.plan(Request{Filter: []byte(`{"type":"eq","term":"CATEGORY","value":"b"}`), CaseSensitive: true})
	require.Equal(t, fault.BadRequest, fault.KindOf(err), "%v", err)

	// Time travel to before the deletes: no delete files.
	r, err = f.plan(Request{SnapshotID: &s1, UseSnapshotSchema: true})
	require.NoError(t, err)
	require.Equal(t, []string{"a1.parquet", "b1.parquet"}, files(r))
	require.Empty(t, r.DeleteFiles)
	r, err = f.plan(Request{SnapshotID: &s1, Select: []string{"id"}})
	require.NoError(t, err)
	require.Equal(t, []string{"a1.parquet", "b1.parquet"}, files(r))
}

func TestPlanAvroErrors(t *testing.T) {
	f := newPlanFix(t, 2)
	s1 := f.commit(table.OpAppend, []iceberg.DataFile{f.data("a1.parquet", "a", 1, 10)}, nil)
	missing := int64(424242)
	for name, tc := range map[string]struct {
		req  Request
		kind fault.Kind
		msg  string
	}{
		"malformed filter":  {Request{Filter: []byte(`{"type":`)}, fault.BadRequest, "Invalid filter"},
		"unknown column":    {Request{Filter: []byte(`{"type":"eq","term":"nope","value":1}`)}, fault.BadRequest, "Invalid filter"},
		"unknown operation": {Request{Filter: []byte(`{"type":"frobnicate","term":"id"}`)}, fault.BadRequest, "Invalid filter"},
		"unknown select":    {Request{Select: []string{"nope"}}, fault.BadRequest, "Invalid select"},
		"unknown snapshot":  {Request{SnapshotID: &missing}, fault.NotFound, "424242"},
		"unknown end":       {Request{StartSnapshotID: &s1, EndSnapshotID: &missing}, fault.NotFound, "424242"},
		"start without end": {Request{StartSnapshotID: &s1}, fault.BadRequest, "end-snapshot-id is required"},
		"snapshot and range": {Request{SnapshotID: &s1, StartSnapshotID: &s1, EndSnapshotID: &s1}, fault.BadRequest,
			"cannot be combined"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.plan(tc.req)
			require.Error(t, err)
			require.Equal(t, tc.kind, fault.KindOf(err), "%v", err)
			require.Contains(t, err.Error(), tc.msg)
			require.NotContains(t, err.Error(), f.loc, "no server path in the message")
		})
	}
}

func TestPlanAvroIncremental(t *testing.T) {
	f := newPlanFix(t, 2)
	s1 := f.commit(table.OpAppend, []iceberg.DataFile{f.data("a1.parquet", "a", 1, 10)}, nil)
	s2 := f.commit(table.OpAppend, []iceberg.DataFile{f.data("a2.parquet", "a", 11, 20)}, nil)
	s3 := f.commit(table.OpAppend, []iceberg.DataFile{f.data("b3.parquet", "b", 21, 30)}, nil)

	r, err := f.plan(Request{StartSnapshotID: &s1, EndSnapshotID: &s3})
	require.NoError(t, err)
	require.Equal(t, []string{"a2.parquet", "b3.parquet"}, files(r))
	r, err = f.plan(Request{StartSnapshotID: &s1, EndSnapshotID: &s2})
	require.NoError(t, err)
	require.Equal(t, []string{"a2.parquet"}, files(r))
	r, err = f.plan(Request{EndSnapshotID: &s2})
	require.NoError(t, err)
	require.Equal(t, []string{"a1.parquet", "a2.parquet"}, files(r), "no start: every append up to end")
	r, err = f.plan(Request{StartSnapshotID: &s1, EndSnapshotID: &s3, Filter: []byte(`{"type":"eq","term":"category","value":"b"}`)})
	require.NoError(t, err)
	require.Equal(t, []string{"b3.parquet"}, files(r), "the filter applies to incremental plans")

	_, err = f.plan(Request{StartSnapshotID: &s3, EndSnapshotID: &s1})
	require.Equal(t, fault.BadRequest, fault.KindOf(err), "%v", err)
	require.Contains(t, err.Error(), "not an ancestor")

	pos := f.deletes(iceberg.EntryContentPosDeletes, "a1-pos.parquet", "a", 1, nil)
	s4 := f.commit(table.OpDelete, nil, []iceberg.DataFile{pos})
	_, err = f.plan(Request{StartSnapshotID: &s1, EndSnapshotID: &s4})
	require.Equal(t, fault.BadRequest, fault.KindOf(err), "%v", err)
	require.Contains(t, err.Error(), "not an append")
	r, err = f.plan(Request{StartSnapshotID: &s1, EndSnapshotID: &s3})
	require.NoError(t, err, "a range before the delete still plans")
	require.Len(t, r.Tasks, 2)
}

func TestPlanAvroV3DeletionVectors(t *testing.T) {
	f := newPlanFix(t, 3)
	f.commit(table.OpAppend, []iceberg.DataFile{f.data("a1.parquet", "a", 1, 10), f.data("b1.parquet", "b", 11, 20)}, nil)
	dv := f.deletes(iceberg.EntryContentPosDeletes, "dv.puffin", "a", 3, func(b *iceberg.DataFileBuilder) {
		b.ReferencedDataFile(f.loc + "/data/a1.parquet").ContentOffset(4).ContentSizeInBytes(42)
	})
	f.commit(table.OpDelete, nil, []iceberg.DataFile{dv})

	r, err := f.plan(Request{})
	require.NoError(t, err)
	require.Equal(t, []string{"a1.parquet", "b1.parquet"}, files(r))
	a1, b1 := taskOf(t, r, "a1.parquet"), taskOf(t, r, "b1.parquet")
	require.Empty(t, b1.DeleteRefs)
	require.Len(t, a1.DeleteRefs, 1)
	d := r.DeleteFiles[a1.DeleteRefs[0]]
	require.Equal(t, "position-deletes", d.Content)
	require.Equal(t, "puffin", d.FileFormat)
	require.Equal(t, int64(3), d.RecordCount)
	require.NotNil(t, d.ReferencedDataFile)
	require.Equal(t, a1.Location, *d.ReferencedDataFile)
	require.Equal(t, int64(4), *d.ContentOffset)
	require.Equal(t, int64(42), *d.ContentSize)
	// Row lineage: the first data manifest starts at row 0; the two files
	// get consecutive ranges.
	require.NotNil(t, a1.FirstRowID)
	require.NotNil(t, b1.FirstRowID)
	require.ElementsMatch(t, []int64{0, 10}, []int64{*a1.FirstRowID, *b1.FirstRowID})
}

func TestPlanAvroRefusesManifestListOutsideTable(t *testing.T) {
	f := newPlanFix(t, 2)
	// The manifest list sits in the warehouse, but in another table's
	// directory: the planner must refuse it without reading it.
	other := f.w.Location + "/ns/other/metadata"
	f.commit(table.OpAppend, []iceberg.DataFile{f.data("a1.parquet", "a", 1, 10)}, nil, other)
	_, err := f.plan(Request{})
	require.Error(t, err)
	require.Equal(t, fault.Internal, fault.KindOf(err))
	require.Contains(t, err.Error(), "outside its location")
	require.NotContains(t, err.Error(), f.w.Location)
}

// TestPlanAvroSnapshotSchema checks which schema filter and select bind to
// for time travel: the current one by default (REST use-snapshot-schema
// false), the snapshot's with use-snapshot-schema.
func TestPlanAvroSnapshotSchema(t *testing.T) {
	f := newPlanFix(t, 2)
	s1 := f.commit(table.OpAppend, []iceberg.DataFile{f.data("a1.parquet", "a", 1, 10)}, nil)
	s2 := f.commit(table.OpAppend, []iceberg.DataFile{f.data("a2.parquet", "a", 11, 20)}, nil)
	s3 := f.commit(table.OpAppend, []iceberg.DataFile{f.data("a3.parquet", "a", 21, 30)}, nil)
	evolved := iceberg.NewSchema(1, append(f.md.CurrentSchema().Fields(),
		iceberg.NestedField{ID: 4, Name: "note", Type: iceberg.PrimitiveTypes.String})...)
	b, err := table.MetadataBuilderFromBase(f.md, "")
	require.NoError(t, err)
	require.NoError(t, b.AddSchema(evolved))
	require.NoError(t, b.SetCurrentSchemaID(1))
	f.md, err = b.Build()
	require.NoError(t, err)

	isNull := []byte(`{"type":"is-null","term":"note"}`)
	r, err := f.plan(Request{SnapshotID: &s1, Filter: isNull, CaseSensitive: true, Select: []string{"note"}})
	require.NoError(t, err, "note exists in the current schema")
	require.Equal(t, []string{"a1.parquet"}, files(r), "but the plan is of snapshot 1")
	_, err = f.plan(Request{SnapshotID: &s1, Filter: isNull, CaseSensitive: true, UseSnapshotSchema: true})
	require.Equal(t, fault.BadRequest, fault.KindOf(err), "note is not in snapshot 1's schema: %v", err)

	// The same for an incremental plan ending before the head.
	r, err = f.plan(Request{StartSnapshotID: &s1, EndSnapshotID: &s2, Filter: isNull, CaseSensitive: true})
	require.NoError(t, err)
	require.Equal(t, []string{"a2.parquet"}, files(r))
	r, err = f.plan(Request{StartSnapshotID: &s1, EndSnapshotID: &s3, Filter: isNull, CaseSensitive: true})
	require.NoError(t, err)
	require.Equal(t, []string{"a2.parquet", "a3.parquet"}, files(r))
	_, err = f.plan(Request{StartSnapshotID: &s1, EndSnapshotID: &s2, Filter: isNull, CaseSensitive: true, UseSnapshotSchema: true})
	require.Equal(t, fault.BadRequest, fault.KindOf(err), "%v", err)
}

// TestPlanAvroV1 plans a format v1 table (no delete files in v1).
func TestPlanAvroV1(t *testing.T) {
	f := newPlanFix(t, 1)
	f.commit(table.OpAppend, []iceberg.DataFile{f.data("a1.parquet", "a", 1, 10), f.data("b1.parquet", "b", 11, 20)}, nil)
	r, err := f.plan(Request{Filter: []byte(`{"type":"lt","term":"id","value":5}`), CaseSensitive: true})
	require.NoError(t, err)
	require.Equal(t, []string{"a1.parquet"}, files(r))
	require.Empty(t, r.DeleteFiles)
	require.Equal(t, []any{"a", "2024-01-02"}, r.Tasks[0].PartitionValues)
}

func TestSingleValueJSON(t *testing.T) {
	dec := iceberg.DecimalTypeOf(10, 2)
	u := uuid.MustParse("f79c3e09-677c-4bbd-a479-3f349cb785e7")
	for name, tc := range map[string]struct {
		v    any
		typ  iceberg.Type
		want any
	}{
		"null":        {nil, iceberg.PrimitiveTypes.Date, nil},
		"date":        {iceberg.Date(19724), iceberg.PrimitiveTypes.Date, "2024-01-02"},
		"date int32":  {int32(0), iceberg.PrimitiveTypes.Date, "1970-01-01"},
		"time":        {iceberg.Time(3723000001), iceberg.PrimitiveTypes.Time, "01:02:03.000001"},
		"timestamp":   {iceberg.Timestamp(1704153600000000), iceberg.PrimitiveTypes.Timestamp, "2024-01-02T00:00:00.000000"},
		"timestamptz": {iceberg.Timestamp(1704153600000001), iceberg.PrimitiveTypes.TimestampTz, "2024-01-02T00:00:00.000001+00:00"},
		"hour int":    {int32(17), iceberg.PrimitiveTypes.Int32, int32(17)},
		"string":      {"a", iceberg.PrimitiveTypes.String, "a"},
		"decimal":     {iceberg.Decimal{Val: decimal128.FromI64(12345), Scale: 2}, dec, "123.45"},
		"uuid":        {u, iceberg.PrimitiveTypes.UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7"},
		"binary":      {[]byte{0xca, 0xfe}, iceberg.PrimitiveTypes.Binary, "CAFE"},
	} {
		t.Run(name, func(t *testing.T) { require.Equal(t, tc.want, PartitionValueJSON(tc.v, tc.typ)) })
	}
}
