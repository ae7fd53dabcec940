package v4manifest

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/lakehold/catalog/internal/mumbling"
	"github.com/stretchr/testify/require"
)

// manifestRootRow is a DATA_MANIFEST root row with the given MDV.
func manifestRootRow(loc string, dv []byte) TrackedFile {
	return TrackedFile{
		Tracking:    Tracking{Status: StatusExisting, SnapshotID: ptr(int64(3)), SequenceNumber: ptr(int64(3)), FileSequenceNumber: ptr(int64(3))},
		ContentType: ContentDataManifest, FormatVersion: 4, Location: loc, FileFormat: "parquet", RecordCount: 12, FileSizeInBytes: 100,
		ManifestInfo: &ManifestInfo{ExistingFiles: 12, ExistingRows: 1200, MinSequenceNumber: 1, DV: dv},
	}
}

// storedDVCardinality reads field 523 of every row straight from the
// Parquet file, bypassing the package's reader: nil for a null cell. It
// fails the test when the column is not a long.
func storedDVCardinality(t *testing.T, data []byte) []*int64 {
	t.Helper()
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	defer tbl.Release()
	for i, f := range tbl.Schema().Fields() {
		if fieldID(f) != IDManifestInfo {
			continue
		}
		var out []*int64
		for _, chunk := range tbl.Column(i).Data().Chunks() {
			kids := children(chunk)
			col, ok := kids[IDManifestDVCardinality].(*array.Int64)
			require.True(t, ok, "field 523 is a long column")
			for r := 0; r < col.Len(); r++ {
				out = append(out, optInt64(col, r))
			}
		}
		return out
	}
	t.Fatal("no manifest_info column")
	return nil
}

// TestDVCardinalityRoundTrip: the writer computes dv_cardinality from the
// vector (null without one), and the reader gives the rows back unchanged.
func TestDVCardinalityRoundTrip(t *testing.T) {
	dv, err := mumbling.Encode([]uint32{1, 4, 9, 300})
	require.NoError(t, err)
	empty, err := mumbling.Encode(nil)
	require.NoError(t, err)
	rows := []TrackedFile{manifestRootRow("m1.parquet", dv), manifestRootRow("m2.parquet", nil), manifestRootRow("m3.parquet", empty)}
	data := writeAll(t, WriterOptions{Content: ContentRoot}, rows)
	stored := storedDVCardinality(t, data)
	require.Len(t, stored, 3)
	require.NotNil(t, stored[0])
	require.Equal(t, int64(4), *stored[0])
	require.Nil(t, stored[1], "no dv, no cardinality")
	require.NotNil(t, stored[2])
	require.Equal(t, int64(0), *stored[2], "an empty vector counts 0")

	got := readAll(t, data, ReaderOptions{})
	require.Equal(t, rows, got)
	n, err := got[0].ManifestInfo.DVCardinality()
	require.NoError(t, err)
	require.Equal(t, int64(4), n)
	require.Equal(t, int64(4), got[0].JSON()["manifest_info"].(map[string]any)["dv_cardinality"])
}

// TestWriterRefusesUnreadableManifestDV: without a readable vector there
// is no cardinality to write.
func TestWriterRefusesUnreadableManifestDV(t *testing.T) {
	w, err := NewWriter(&bytes.Buffer{}, WriterOptions{Content: ContentRoot})
	require.NoError(t, err)
	defer w.Close()
	row := manifestRootRow("m.parquet", []byte{1, 5, 0, 0, 1, 0})
	require.ErrorIs(t, w.Write(&row), ErrInvalidRow)
}

// TestReadManifestWithoutDVCardinality reads a root written before field
// 523 existed (testdata/pre523): it has no such column, and the count
// comes from the vector.
func TestReadManifestWithoutDVCardinality(t *testing.T) {
	data, err := os.ReadFile("testdata/pre523/root.parquet")
	require.NoError(t, err)
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	require.NoError(t, err)
	for c := 0; c < pf.MetaData().Schema.NumColumns(); c++ {
		require.NotEqual(t, int32(IDManifestDVCardinality), pf.MetaData().Schema.Column(c).SchemaNode().FieldID(), "the fixture predates 523")
	}
	rows := readAll(t, data, ReaderOptions{})
	require.Len(t, rows, 2)
	masked, err := rows[0].MaskedPositions()
	require.NoError(t, err)
	require.Equal(t, map[int64]bool{0: true, 2: true}, masked)
	n, err := rows[0].ManifestInfo.DVCardinality()
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	n, err = rows[1].ManifestInfo.DVCardinality()
	require.NoError(t, err)
	require.Equal(t, int64(0), n)
	require.Equal(t, int32(3), rows[0].ManifestInfo.AddedFiles)

	// Carried into a manifest written now, the row gains 523.
	rewritten := writeAll(t, WriterOptions{Content: ContentRoot}, rows)
	stored := storedDVCardinality(t, rewritten)
	require.Equal(t, int64(2), *stored[0])
	require.Nil(t, stored[1])
	require.Equal(t, rows, readAll(t, rewritten, ReaderOptions{}))
}

// retype returns the manifest schema with the types of some manifest_info
// members replaced (by field id), as another writer might type them.
func retype(t *testing.T, types map[int]arrow.DataType) *arrow.Schema {
	t.Helper()
	sc, err := ArrowSchema(nil, nil, false)
	require.NoError(t, err)
	fields := sc.Fields()
	for i, f := range fields {
		if fieldID(f) != IDManifestInfo {
			continue
		}
		kids := f.Type.(*arrow.StructType).Fields()
		for j, k := range kids {
			if typ, ok := types[fieldID(k)]; ok {
				kids[j].Type = typ
			}
		}
		fields[i].Type = arrow.StructOf(kids...)
	}
	return arrow.NewSchema(fields, nil)
}

// writeForeign writes JSON rows under a schema with pqarrow directly: a
// manifest from another writer, which may break what this writer keeps.
func writeForeign(t *testing.T, sc *arrow.Schema, rows []string) []byte {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader("["+strings.Join(rows, ",")+"]"))
	require.NoError(t, err)
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, fw.Write(rec))
	require.NoError(t, fw.Close())
	return buf.Bytes()
}

// foreignRow is a JSON root row with the given manifest_info members.
func foreignRow(info string) string {
	return `{"tracking": {"status": 0, "snapshot_id": 3, "sequence_number": 3, "file_sequence_number": 3},
		"content_type": 3, "format_version": 4, "location": "m.parquet", "file_format": "parquet",
		"record_count": 12, "file_size_in_bytes": 100,
		"manifest_info": {"added_files_count": 1, "existing_files_count": 11, "deleted_files_count": 0,
			"replaced_files_count": 0, "modified_files_count": 2, "added_rows_count": 10, "existing_rows_count": 1100,
			"deleted_rows_count": 0, "replaced_rows_count": 0, "modified_rows_count": 0, "min_sequence_number": 1` + info + `}}`
}

// TestReaderChecksDVCardinality: where a file has field 523 it must be set
// exactly when dv is, and count the vector's positions.
func TestReaderChecksDVCardinality(t *testing.T) {
	dv, err := mumbling.Encode([]uint32{2, 7, 11})
	require.NoError(t, err)
	b64 := base64.StdEncoding.EncodeToString(dv)
	for _, c := range []struct {
		name, info string
		typ        arrow.DataType
		ok         bool
	}{
		{"matches", fmt.Sprintf(`, "dv": %q, "dv_cardinality": 3`, b64), nil, true},
		{"matches as int", fmt.Sprintf(`, "dv": %q, "dv_cardinality": 3`, b64), arrow.PrimitiveTypes.Int32, true},
		{"neither", `, "dv": null, "dv_cardinality": null`, nil, true},
		{"too many", fmt.Sprintf(`, "dv": %q, "dv_cardinality": 4`, b64), nil, false},
		{"too few", fmt.Sprintf(`, "dv": %q, "dv_cardinality": 0`, b64), nil, false},
		{"missing", fmt.Sprintf(`, "dv": %q, "dv_cardinality": null`, b64), nil, false},
		{"without dv", `, "dv": null, "dv_cardinality": 3`, nil, false},
		{"unreadable dv", `, "dv": "AQUAAAEA", "dv_cardinality": 5`, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			types := map[int]arrow.DataType{}
			if c.typ != nil {
				types[IDManifestDVCardinality] = c.typ
			}
			data := writeForeign(t, retype(t, types), []string{foreignRow(c.info)})
			r, err := NewReader(bytes.NewReader(data), ReaderOptions{})
			require.NoError(t, err)
			defer r.Close()
			rows, err := r.All(context.Background())
			if !c.ok {
				require.ErrorIs(t, err, ErrMalformed)
				return
			}
			require.NoError(t, err)
			require.Len(t, rows, 1)
		})
	}
}

// TestReaderFileCountsIntOrLong: the file counts (504-506, 520, 524) are
// read from INT32 (Java main, this writer) and INT64 (the spec draft)
// alike; a long that does not fit an int is malformed.
func TestReaderFileCountsIntOrLong(t *testing.T) {
	countIDs := []int{IDAddedFilesCount, IDExistingFilesCount, IDDeletedFilesCount, IDReplacedFilesCount, IDModifiedFilesCount}
	want := ManifestInfo{AddedFiles: 1, ExistingFiles: 11, ModifiedFiles: 2, AddedRows: 10, ExistingRows: 1100, MinSequenceNumber: 1}
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64} {
		t.Run(typ.String(), func(t *testing.T) {
			types := map[int]arrow.DataType{}
			for _, id := range countIDs {
				types[id] = typ
			}
			sc := retype(t, types)
			rows := readAll(t, writeForeign(t, sc, []string{foreignRow("")}), ReaderOptions{})
			require.Len(t, rows, 1)
			require.Equal(t, want, *rows[0].ManifestInfo)
		})
	}
	types := map[int]arrow.DataType{}
	for _, id := range countIDs {
		types[id] = arrow.PrimitiveTypes.Int64
	}
	huge := strings.Replace(foreignRow(""), `"existing_files_count": 11`, `"existing_files_count": 4294967296`, 1)
	r, err := NewReader(bytes.NewReader(writeForeign(t, retype(t, types), []string{huge})), ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	_, err = r.All(context.Background())
	require.ErrorIs(t, err, ErrMalformed)
}
