package validation

import (
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"
)

func testTable() Table {
	sc := iceberg.NewSchemaWithIdentifiers(0, []int{1},
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 4, Name: "emb", Type: iceberg.FixedTypeOf(8)},
		iceberg.NestedField{ID: 5, Name: "loc", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 6, Name: "lat", Type: iceberg.PrimitiveTypes.Float64}}}},
	)
	spec := iceberg.NewPartitionSpecID(0, iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	return Table{Location: "s3://b/t", Schema: sc, Specs: []iceberg.PartitionSpec{spec}}
}

func cf(ids ...int) ColumnFile {
	return ColumnFile{DataFile: "s3://b/t/data/a.parquet", Location: "s3://b/t/data/cf.parquet", FileFormat: "parquet",
		FieldIDs: ids, FileSizeInBytes: 100, RecordCount: 10}
}

func reason(t *testing.T, err error) string {
	t.Helper()
	var ve *Error
	require.True(t, errors.As(err, &ve), "want *Error, got %v", err)
	require.NotEmpty(t, ve.Details)
	return ve.Reason
}

func TestCheckRequest(t *testing.T) {
	tbl := testTable()
	other := cf(3)
	other.Location = "s3://b/t/data/cf2.parquet"
	outside := cf(3)
	outside.Location = "s3://b/t2/cf.parquet"
	orc := cf(3)
	orc.FileFormat = "orc"
	cases := map[string]struct {
		files  []ColumnFile
		reason string
	}{
		"ok":                  {[]ColumnFile{cf(3, 4)}, ""},
		"lineage id ok":       {[]ColumnFile{cf(3, 2147483539)}, ""},
		"disjoint same base":  {[]ColumnFile{cf(3), func() ColumnFile { c := cf(4); c.Location = "s3://b/t/x.parquet"; return c }()}, ""},
		"empty":               {[]ColumnFile{cf()}, ReasonEmptyFieldIDs},
		"duplicate":           {[]ColumnFile{cf(3, 3)}, ReasonDuplicateFieldIDs},
		"overlap":             {[]ColumnFile{cf(3, 4), other}, ReasonFieldIDOverlap},
		"unknown":             {[]ColumnFile{cf(99)}, ReasonUnknownFieldID},
		"nested":              {[]ColumnFile{cf(6)}, ReasonNotTopLevelField},
		"row id":              {[]ColumnFile{cf(2147483540)}, ReasonReservedFieldID},
		"pos":                 {[]ColumnFile{cf(2147483645)}, ReasonReservedFieldID},
		"partition source":    {[]ColumnFile{cf(2)}, ReasonPartitionSourceField},
		"identifier":          {[]ColumnFile{cf(1)}, ReasonIdentifierField},
		"outside table":       {[]ColumnFile{outside}, ReasonLocationOutsideTable},
		"unsupported format":  {[]ColumnFile{orc}, ReasonUnsupportedFileFormat},
		"look-alike location": {[]ColumnFile{func() ColumnFile { c := cf(3); c.Location = "s3://b/t2/data/x.parquet"; return c }()}, ReasonLocationOutsideTable},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckRequest(tbl, c.files)
			if c.reason == "" {
				require.NoError(t, err)
				return
			}
			require.Equal(t, c.reason, reason(t, err))
		})
	}
}

func TestCheckBase(t *testing.T) {
	require.NoError(t, CheckBase(cf(3), Base{Found: true, Live: true, IsData: true, RecordCount: 10}))
	require.Equal(t, ReasonUnknownDataFile, reason(t, CheckBase(cf(3), Base{})))
	require.Equal(t, ReasonDataFileNotLive, reason(t, CheckBase(cf(3), Base{Found: true, IsData: true, RecordCount: 10})))
	require.Equal(t, ReasonRecordCountMismatch, reason(t, CheckBase(cf(3), Base{Found: true, Live: true, IsData: true, RecordCount: 11})))
}

func TestCheckFooter(t *testing.T) {
	tbl := testTable()
	good := Footer{Readable: true, NumRows: 10, Size: 100, Nodes: map[int]FooterColumn{
		3: {Leaf: true, Physical: "DOUBLE"}, 4: {Leaf: true, Physical: "FIXED_LEN_BYTE_ARRAY", TypeLength: 8},
	}}
	require.NoError(t, CheckFooter(tbl, cf(3, 4), good))
	mut := func(f func(*Footer)) Footer {
		c := good
		c.Nodes = map[int]FooterColumn{}
		for k, v := range good.Nodes {
			c.Nodes[k] = v
		}
		f(&c)
		return c
	}
	cases := map[string]struct {
		ft     Footer
		reason string
	}{
		"unreadable": {Footer{Err: "bad magic"}, ReasonColumnFileUnreadable},
		"rows":       {mut(func(f *Footer) { f.NumRows = 9 }), ReasonRecordCountMismatch},
		"size":       {mut(func(f *Footer) { f.Size = 1 }), ReasonFileSizeMismatch},
		"missing id": {mut(func(f *Footer) { delete(f.Nodes, 4) }), ReasonColumnFileSchema},
		"wrong type": {mut(func(f *Footer) { f.Nodes[3] = FooterColumn{Leaf: true, Physical: "FLOAT"} }), ReasonColumnFileSchema},
		"wrong width": {mut(func(f *Footer) {
			f.Nodes[4] = FooterColumn{Leaf: true, Physical: "FIXED_LEN_BYTE_ARRAY", TypeLength: 4}
		}), ReasonColumnFileSchema},
		"required": {mut(func(f *Footer) { f.Nodes[3] = FooterColumn{Leaf: true, Required: true, Physical: "DOUBLE"} }), ReasonRequiredColumn},
		"required column not listed (a map key, an extra)": {mut(func(f *Footer) { f.Nodes[2147483645] = FooterColumn{Leaf: true, Required: true, Physical: "INT64"} }), ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckFooter(tbl, cf(3, 4), c.ft)
			if c.reason == "" {
				require.NoError(t, err)
				return
			}
			require.Equal(t, c.reason, reason(t, err))
		})
	}
}

func TestCheckEqualityDeletes(t *testing.T) {
	eq := func(a, b any) bool { return a == b }
	part := map[int]any{1000: "eu"}
	f := cf(3)
	require.NoError(t, CheckEqualityDeletes(f, 5, 0, part, []DeleteFile{{Location: "old", SequenceNumber: 5, Unpartitioned: true}}, eq), "older deletes no longer apply")
	require.NoError(t, CheckEqualityDeletes(f, 5, 0, part, []DeleteFile{{Location: "other", SequenceNumber: 9, SpecID: 0, Partition: map[int]any{1000: "us"}}}, eq))
	require.Equal(t, ReasonEqualityDeletesPresent, reason(t, CheckEqualityDeletes(f, 5, 0, part, []DeleteFile{{Location: "same", SequenceNumber: 9, SpecID: 0, Partition: map[int]any{1000: "eu"}}}, eq)))
	require.Equal(t, ReasonEqualityDeletesPresent, reason(t, CheckEqualityDeletes(f, 5, 0, part, []DeleteFile{{Location: "global", SequenceNumber: 6, Unpartitioned: true}}, eq)))
}

func TestMergeColumnFiles(t *testing.T) {
	old := []MergedFile{{Location: "a", FieldIDs: []int{3, 4}}, {Location: "b", FieldIDs: []int{5}}}
	m := MergeColumnFiles(old, []ColumnFile{{Location: "c", FieldIDs: []int{4, 5}}})
	require.Equal(t, []MergedFile{{Location: "a", FieldIDs: []int{3}}, {Location: "c", FieldIDs: []int{4, 5}, New: true}}, m.Files)
	require.Equal(t, 1, m.Retired, "b lost its only id")
	// Updating the same field twice: the newer file wins.
	m = MergeColumnFiles(m.Files, []ColumnFile{{Location: "d", FieldIDs: []int{3}}})
	require.Equal(t, 1, m.Retired)
	seen := map[int]int{}
	for _, f := range m.Files {
		for _, id := range f.FieldIDs {
			seen[id]++
		}
	}
	for id, n := range seen {
		require.Equal(t, 1, n, "field %d in more than one file", id)
	}
	// An update without row lineage makes the older lineage stale.
	old = []MergedFile{{Location: "a", FieldIDs: []int{3, fieldLastUpdatedSeq}}, {Location: "b", FieldIDs: []int{fieldLastUpdatedSeq}}}
	m = MergeColumnFiles(old, []ColumnFile{{Location: "c", FieldIDs: []int{4}}})
	require.Equal(t, []MergedFile{{Location: "a", FieldIDs: []int{3}}, {Location: "c", FieldIDs: []int{4}, New: true}}, m.Files)
	require.Equal(t, 1, m.Retired, "b held only the stale lineage")
}

func FuzzMergeColumnFiles(f *testing.F) {
	f.Add([]byte{3, 4, 0, 5, 0, 4, 5})
	f.Fuzz(func(t *testing.T, spec []byte) {
		// bytes: groups of ids separated by 0; the last group is the new file.
		var groups [][]int
		cur := []int{}
		for _, b := range spec {
			if b == 0 {
				groups = append(groups, cur)
				cur = []int{}
				continue
			}
			cur = append(cur, int(b%16)+1)
		}
		var old []MergedFile
		for i, g := range groups {
			seen := map[int]bool{}
			ids := []int{}
			for _, id := range g {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			if len(ids) > 0 {
				old = append(old, MergedFile{Location: string(rune('a' + i%26)), FieldIDs: ids})
			}
		}
		// Old files must already be disjoint: keep first owner of each id.
		owned := map[int]bool{}
		for i := range old {
			keep := []int{}
			for _, id := range old[i].FieldIDs {
				if !owned[id] {
					owned[id] = true
					keep = append(keep, id)
				}
			}
			old[i].FieldIDs = keep
		}
		newIDs := map[int]bool{}
		var add []int
		for _, id := range cur {
			if !newIDs[id] {
				newIDs[id] = true
				add = append(add, id)
			}
		}
		if len(add) == 0 {
			return
		}
		m := MergeColumnFiles(old, []ColumnFile{{Location: "zz", FieldIDs: add}})
		count := map[int]int{}
		for _, mf := range m.Files {
			require.NotEmpty(t, mf.FieldIDs)
			for _, id := range mf.FieldIDs {
				count[id]++
			}
		}
		for id, n := range count {
			require.Equal(t, 1, n, "id %d appears %d times", id, n)
		}
		for _, id := range add {
			require.Equal(t, 1, count[id])
		}
	})
}
