package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/v4manifest"
)

const wideSchemaJSON = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"id","type":"long","required":true},
 {"id":2,"name":"data","type":"string","required":false},
 {"id":3,"name":"score","type":"double","required":false},
 {"id":4,"name":"label","type":"string","required":false}]}`

func fieldMD(id int) arrow.Metadata {
	return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(id)})
}

// writeParquet writes one record with the given columns.
func writeParquet(t *testing.T, path string, fields []arrow.Field, fill func(b *array.RecordBuilder)) int64 {
	t.Helper()
	return parquettest.Write(t, path, fields, fill)
}

func writeBase(t *testing.T, path string, n int) int64 {
	return writeParquet(t, path, []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: fieldMD(1)},
		{Name: "data", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fieldMD(2)},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: fieldMD(3)},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fieldMD(4)},
	}, func(b *array.RecordBuilder) {
		for i := 0; i < n; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append("d")
			b.Field(2).(*array.Float64Builder).Append(0)
			b.Field(3).(*array.StringBuilder).Append("old")
		}
	})
}

// writeScores writes a column file with score (3) and optionally label (4).
func writeScores(t *testing.T, path string, n int, base float64, withLabel bool, required bool) int64 {
	fields := []arrow.Field{{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: !required, Metadata: fieldMD(3)}}
	if withLabel {
		fields = append(fields, arrow.Field{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fieldMD(4)})
	}
	return writeParquet(t, path, fields, func(b *array.RecordBuilder) {
		for i := 0; i < n; i++ {
			b.Field(0).(*array.Float64Builder).Append(base + float64(i))
			if withLabel {
				b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("l%d", i))
			}
		}
	})
}

type v4Table struct {
	b        *bundle
	loc, dir string
	path     string
}

func newV4Table(t *testing.T, b *bundle, name string, bases map[string]int) *v4Table {
	t.Helper()
	r := b.createTable(t, "ns", name, map[string]any{"schema": rawJSON(wideSchemaJSON), "properties": map[string]string{"format-version": "4"}})
	require.Equal(t, 200, r.status, "%s", r.body)
	loc, _, _ := v4Meta(t, r)
	vt := &v4Table{b: b, loc: loc, dir: strings.TrimPrefix(loc, "file://"), path: "/v1/wh/namespaces/ns/tables/" + name}
	var adds []any
	for f, n := range bases {
		size := writeBase(t, filepath.Join(vt.dir, "data", f), n)
		adds = append(adds, map[string]any{"location": "data/" + f, "file-format": "parquet", "record-count": n, "file-size-in-bytes": size, "spec-id": 0})
	}
	r = b.do(t, "POST", vt.path+"/files", map[string]any{"add-data-files": adds})
	require.Equal(t, 200, r.status, "%s", r.body)
	return vt
}

func (vt *v4Table) columnFile(base, name string, n int, ids []int, size int64) map[string]any {
	return map[string]any{"data-file": vt.loc + "/data/" + base, "location": "data/" + name, "file-format": "parquet",
		"field-ids": ids, "file-size-in-bytes": size, "record-count": n}
}

func (vt *v4Table) commit(t *testing.T, files ...map[string]any) response {
	t.Helper()
	list := make([]any, len(files))
	for i, f := range files {
		list[i] = f
	}
	return vt.b.do(t, "POST", vt.path+"/column-files", map[string]any{"column-files": list, "snapshot-properties": map[string]string{"job": "embedding-refresh"}})
}

// liveRow returns the live row of a base file at the current snapshot (in
// a leaf or in the root itself), and every row of it seen.
func (vt *v4Table) liveRow(t *testing.T, base string) (v4manifest.TrackedFile, []v4manifest.TrackedFile) {
	t.Helper()
	_, snaps, _ := v4Meta(t, vt.b.do(t, "GET", vt.path, nil))
	root := readManifestFile(t, snaps[len(snaps)-1].RootManifest, vt.loc, nil)
	var all []v4manifest.TrackedFile
	var live *v4manifest.TrackedFile
	for i := range root {
		if !root[i].Tracking.Status.Live() {
			continue
		}
		rows := []v4manifest.TrackedFile{root[i]} // a file in the root itself
		if root[i].ContentType == v4manifest.ContentDataManifest {
			rows = readManifestFile(t, root[i].Location, vt.loc, &root[i])
		}
		for j := range rows {
			if rows[j].Location == vt.loc+"/data/"+base {
				all = append(all, rows[j])
				if rows[j].Tracking.Status.Live() {
					r := rows[j]
					live = &r
				}
			}
		}
	}
	require.NotNil(t, live, "no live row for %s", base)
	return *live, all
}

// replacedRows reads the rows that snapshot snap replaced: for each root
// row whose manifest deletion vector snap changed, the rows of its leaf at
// its replaced_positions, and the REPLACED rows in the root itself.
func (vt *v4Table) replacedRows(t *testing.T, snap int64) []v4manifest.TrackedFile {
	t.Helper()
	_, snaps, _ := v4Meta(t, vt.b.do(t, "GET", vt.path, nil))
	var out []v4manifest.TrackedFile
	for _, rr := range readManifestFile(t, snaps[len(snaps)-1].RootManifest, vt.loc, nil) {
		if rr.ContentType == v4manifest.ContentData && rr.Tracking.Status == v4manifest.StatusReplaced && *rr.Tracking.SnapshotID == snap {
			out = append(out, rr) // replaced in the root itself
			continue
		}
		if rr.ContentType != v4manifest.ContentDataManifest || rr.Tracking.Status != v4manifest.StatusModified ||
			rr.Tracking.DVSnapshotID == nil || *rr.Tracking.DVSnapshotID != snap {
			continue
		}
		positions, err := rr.ReplacedInSnapshot()
		require.NoError(t, err)
		f, err := os.Open(strings.TrimPrefix(v4manifest.Resolve(vt.loc, rr.Location), "file://"))
		require.NoError(t, err)
		r, err := v4manifest.NewReader(f, v4manifest.ReaderOptions{TableLocation: vt.loc, InheritFrom: &rr, IncludeMasked: true})
		require.NoError(t, err)
		rows, err := r.All(context.Background())
		require.NoError(t, err)
		f.Close()
		for _, row := range rows {
			if positions[row.Pos] {
				row.Pos = 0
				out = append(out, row)
			}
		}
	}
	return out
}

func cfIDs(tf v4manifest.TrackedFile) map[string][]int32 {
	out := map[string][]int32{}
	for _, c := range tf.ColumnFiles {
		out[filepath.Base(c.Location)] = c.FieldIDs
	}
	return out
}

func TestColumnFileCommits(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 3, "b.parquet": 2})
			baseRow, _ := vt.liveRow(t, "a.parquet")

			s1 := writeScores(t, filepath.Join(vt.dir, "data/cf1.parquet"), 3, 10, true, false)
			r := vt.commit(t, vt.columnFile("a.parquet", "cf1.parquet", 3, []int{3, 4}, s1))
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, nextRowID := v4Meta(t, r)
			last := snaps[len(snaps)-1]
			require.Equal(t, "overwrite", last.Summary["operation"])
			require.Equal(t, "1", last.Summary["added-column-files"])
			require.Equal(t, "1", last.Summary["modified-data-files"])
			require.Equal(t, "embedding-refresh", last.Summary["job"])
			require.Equal(t, int64(5), nextRowID, "column files assign no row ids")

			mod, seen := vt.liveRow(t, "a.parquet")
			require.Len(t, seen, 1, "the old row is masked in its leaf, not rewritten")
			replaced := vt.replacedRows(t, last.SnapshotID)
			require.Len(t, replaced, 1, "the commit's manifest deletion vector replaced one row")
			require.Equal(t, vt.loc+"/data/a.parquet", replaced[0].Location)
			require.Equal(t, baseRow.Tracking, replaced[0].Tracking, "the replaced row is the base as it was")
			require.Equal(t, v4manifest.StatusModified, mod.Tracking.Status)
			require.Equal(t, *baseRow.Tracking.SnapshotID, *mod.Tracking.SnapshotID, "MODIFIED keeps the adding snapshot")
			require.Equal(t, *baseRow.Tracking.FileSequenceNumber, *mod.Tracking.FileSequenceNumber)
			require.Greater(t, *mod.Tracking.SequenceNumber, *baseRow.Tracking.SequenceNumber, "data sequence number bumped")
			require.Equal(t, last.SnapshotID, *mod.Tracking.LatestColumnFileSnapshotID)
			require.Equal(t, *baseRow.Tracking.FirstRowID, *mod.Tracking.FirstRowID)
			require.Equal(t, map[string][]int32{"cf1.parquet": {3, 4}}, cfIDs(mod))
			require.Equal(t, 10.0, mod.ContentStats[3].LowerBound, "stats of updated fields come from the column file")
			require.Equal(t, 12.0, mod.ContentStats[3].UpperBound)
			require.Equal(t, baseRow.ContentStats[1], mod.ContentStats[1], "other stats are kept")
			untouched, _ := vt.liveRow(t, "b.parquet")
			require.Nil(t, untouched.ColumnFiles)

			// Same field again: the newer file takes it over.
			s2 := writeScores(t, filepath.Join(vt.dir, "data/cf2.parquet"), 3, 20, false, false)
			r = vt.commit(t, vt.columnFile("a.parquet", "cf2.parquet", 3, []int{3}, s2))
			require.Equal(t, 200, r.status, "%s", r.body)
			mod, _ = vt.liveRow(t, "a.parquet")
			require.Equal(t, map[string][]int32{"cf1.parquet": {4}, "cf2.parquet": {3}}, cfIDs(mod))

			// The rest of cf1: it is retired.
			s3 := writeScores(t, filepath.Join(vt.dir, "data/cf3.parquet"), 3, 30, true, false)
			r = vt.commit(t, vt.columnFile("a.parquet", "cf3.parquet", 3, []int{4}, s3))
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, _ = v4Meta(t, r)
			require.Equal(t, "1", snaps[len(snaps)-1].Summary["retired-column-files"])
			mod, _ = vt.liveRow(t, "a.parquet")
			require.Equal(t, map[string][]int32{"cf2.parquet": {3}, "cf3.parquet": {4}}, cfIDs(mod))

			list := b.do(t, "GET", vt.path+"/column-files", nil)
			require.Equal(t, 200, list.status, "%s", list.body)
			require.JSONEq(t, fmt.Sprintf(`{"data-files":[{"data-file":%q,"column-files":[
				{"location":%q,"file-format":"parquet","field-ids":[3],"file-size-in-bytes":%d},
				{"location":%q,"file-format":"parquet","field-ids":[4],"file-size-in-bytes":%d}]}]}`,
				vt.loc+"/data/a.parquet", vt.loc+"/data/cf2.parquet", s2, vt.loc+"/data/cf3.parquet", s3), string(list.body))
		})
	}
}

func TestColumnFileRejections(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testColumnFileRejections(t, backend) })
	}
}

func testColumnFileRejections(t *testing.T, backend string) {
	b := setup(t, backend)
	b.createNamespace(t, "ns")
	vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 3, "gone.parquet": 3})
	require.Equal(t, 200, b.do(t, "POST", vt.path+"/files", map[string]any{"remove-files": []string{"data/gone.parquet"}}).status)

	// A table with a nested field, a partition source and an identifier field.
	r := b.createTable(t, "ns", "rich", map[string]any{
		"schema": rawJSON(`{"type":"struct","schema-id":0,"identifier-field-ids":[1],"fields":[
			{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"data","type":"string","required":false},
			{"id":3,"name":"score","type":"double","required":false},{"id":4,"name":"label","type":"string","required":false},
			{"id":5,"name":"loc","type":{"type":"struct","fields":[{"id":6,"name":"lat","type":"double","required":false}]},"required":false},
			{"id":7,"name":"region","type":"string","required":false}]}`),
		"partition-spec": rawJSON(`{"spec-id":0,"fields":[{"source-id":7,"field-id":1000,"name":"region","transform":"identity"}]}`),
		"properties":     map[string]string{"format-version": "4"},
	})
	require.Equal(t, 200, r.status, "%s", r.body)
	richLoc, _, _ := v4Meta(t, r)
	rich := &v4Table{b: b, loc: richLoc, dir: strings.TrimPrefix(richLoc, "file://"), path: "/v1/wh/namespaces/ns/tables/rich"}
	rsize := writeBase(t, filepath.Join(rich.dir, "data/r.parquet"), 3)
	r = b.do(t, "POST", rich.path+"/files", map[string]any{"add-data-files": []any{map[string]any{
		"location": "data/r.parquet", "file-format": "parquet", "record-count": 3, "file-size-in-bytes": rsize, "spec-id": 0,
		"partition": map[string]any{"region": "eu"}}}})
	require.Equal(t, 200, r.status, "%s", r.body)
	rok := writeScores(t, filepath.Join(rich.dir, "data/ok.parquet"), 3, 1, false, false)
	ok := writeScores(t, filepath.Join(vt.dir, "data/ok.parquet"), 3, 1, false, false)
	short := writeScores(t, filepath.Join(vt.dir, "data/short.parquet"), 2, 1, false, false)
	req := writeScores(t, filepath.Join(vt.dir, "data/req.parquet"), 3, 1, false, true)
	wrongType := writeParquet(t, filepath.Join(vt.dir, "data/int.parquet"),
		[]arrow.Field{{Name: "score", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: fieldMD(3)}},
		func(b *array.RecordBuilder) { b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2, 3}, nil) })
	require.NoError(t, os.WriteFile(filepath.Join(vt.dir, "data/junk.parquet"), []byte("not parquet"), 0o644))
	other := b.createTable(t, "ns", "old", nil)
	require.Equal(t, 200, other.status)

	cases := []struct {
		name   string
		path   string
		files  []map[string]any
		reason string
	}{
		{"unknown base", "", []map[string]any{vt.columnFile("nope.parquet", "ok.parquet", 3, []int{3}, ok)}, "unknown-data-file"},
		{"empty ids", "", []map[string]any{vt.columnFile("a.parquet", "ok.parquet", 3, []int{}, ok)}, "empty-field-ids"},
		{"duplicate ids", "", []map[string]any{vt.columnFile("a.parquet", "ok.parquet", 3, []int{3, 3}, ok)}, "duplicate-field-ids"},
		{"overlap", "", []map[string]any{vt.columnFile("a.parquet", "ok.parquet", 3, []int{3}, ok), vt.columnFile("a.parquet", "int.parquet", 3, []int{3}, wrongType)}, "field-id-overlap"},
		{"unknown id", "", []map[string]any{vt.columnFile("a.parquet", "ok.parquet", 3, []int{42}, ok)}, "unknown-field-id"},
		{"row id", "", []map[string]any{vt.columnFile("a.parquet", "ok.parquet", 3, []int{2147483540}, ok)}, "reserved-field-id"},
		{"record count vs base", "", []map[string]any{vt.columnFile("a.parquet", "short.parquet", 2, []int{3}, short)}, "record-count-mismatch"},
		{"record count vs footer", "", []map[string]any{vt.columnFile("a.parquet", "short.parquet", 3, []int{3}, short)}, "record-count-mismatch"},
		{"size", "", []map[string]any{vt.columnFile("a.parquet", "ok.parquet", 3, []int{3}, ok+1)}, "file-size-mismatch"},
		{"unreadable", "", []map[string]any{vt.columnFile("a.parquet", "junk.parquet", 3, []int{3}, 11)}, "column-file-unreadable"},
		{"missing column", "", []map[string]any{vt.columnFile("a.parquet", "ok.parquet", 3, []int{3, 4}, ok)}, "column-file-schema-mismatch"},
		{"wrong type", "", []map[string]any{vt.columnFile("a.parquet", "int.parquet", 3, []int{3}, wrongType)}, "column-file-schema-mismatch"},
		{"required column", "", []map[string]any{vt.columnFile("a.parquet", "req.parquet", 3, []int{3}, req)}, "required-column"},
		{"outside table", "", []map[string]any{func() map[string]any {
			f := vt.columnFile("a.parquet", "ok.parquet", 3, []int{3}, ok)
			f["location"] = "file:///elsewhere/ok.parquet"
			return f
		}()}, "location-outside-table"},
		{"format", "", []map[string]any{func() map[string]any {
			f := vt.columnFile("a.parquet", "ok.parquet", 3, []int{3}, ok)
			f["file-format"] = "avro"
			return f
		}()}, "unsupported-file-format"},
		{"not v4", "/v1/wh/namespaces/ns/tables/old", []map[string]any{vt.columnFile("a.parquet", "ok.parquet", 3, []int{3}, ok)}, "table-not-v4"},
		{"base removed", "", []map[string]any{vt.columnFile("gone.parquet", "ok.parquet", 3, []int{3}, ok)}, "data-file-not-live"},
		{"nested field", rich.path, []map[string]any{rich.columnFile("r.parquet", "ok.parquet", 3, []int{6}, rok)}, "not-top-level-field"},
		{"partition source", rich.path, []map[string]any{rich.columnFile("r.parquet", "ok.parquet", 3, []int{7}, rok)}, "partition-source-field"},
		{"identifier field", rich.path, []map[string]any{rich.columnFile("r.parquet", "ok.parquet", 3, []int{1}, rok)}, "identifier-field"},
	}
	_, before, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := vt.path
			if c.path != "" {
				path = c.path
			}
			list := make([]any, len(c.files))
			for i, f := range c.files {
				list[i] = f
			}
			r := b.do(t, "POST", path+"/column-files", map[string]any{"column-files": list})
			require.Equal(t, 400, r.status, "%s", r.body)
			typ, _ := r.errorOf(t)
			require.Equal(t, "ValidationException", typ)
			e := r.json(t)["error"].(map[string]any)
			require.Equal(t, c.reason, e["reason"], "%s", r.body)
			require.NotEmpty(t, e["details"], "details name the offending files")
		})
	}
	_, after, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
	require.Equal(t, len(before), len(after), "no rejection committed anything")
}

// TestEqualityDeletesMustBecomeDVs: a live equality delete that applies to
// a base file blocks a column update; after a files commit sets a deletion
// vector and removes the delete file, the update succeeds.
func TestEqualityDeletesMustBecomeDVs(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testEqualityDeletesMustBecomeDVs(t, backend) })
	}
}

func testEqualityDeletesMustBecomeDVs(t *testing.T, backend string) {
	b := setup(t, backend)
	b.createNamespace(t, "ns")
	vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 3})
	delSize := writeParquet(t, filepath.Join(vt.dir, "data/eq.parquet"),
		[]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: fieldMD(1)}},
		func(b *array.RecordBuilder) { b.Field(0).(*array.Int64Builder).Append(1) })
	r := b.do(t, "POST", vt.path+"/files", map[string]any{"add-equality-delete-files": []any{map[string]any{
		"location": "data/eq.parquet", "file-format": "parquet", "record-count": 1, "file-size-in-bytes": delSize, "equality-ids": []int{1}, "spec-id": 0}}})
	require.Equal(t, 200, r.status, "%s", r.body)

	s1 := writeScores(t, filepath.Join(vt.dir, "data/cf1.parquet"), 3, 10, false, false)
	r = vt.commit(t, vt.columnFile("a.parquet", "cf1.parquet", 3, []int{3}, s1))
	require.Equal(t, 400, r.status, "%s", r.body)
	require.Equal(t, "equality-deletes-present", r.json(t)["error"].(map[string]any)["reason"])

	dvA := writeDV(t, vt, "data/dv.puffin", vt.loc+"/data/a.parquet", 1)
	r = b.do(t, "POST", vt.path+"/files", map[string]any{
		"set-deletion-vectors": []any{dvA.request("data/a.parquet")},
		"remove-files":         []string{"data/eq.parquet"},
	})
	require.Equal(t, 200, r.status, "%s", r.body)
	_, snaps, _ := v4Meta(t, r)
	require.Equal(t, "1", snaps[len(snaps)-1].Summary["changed-deletion-vectors"])
	require.Equal(t, "1", snaps[len(snaps)-1].Summary["removed-delete-files"])
	row, _ := vt.liveRow(t, "a.parquet")
	require.Equal(t, v4manifest.StatusModified, row.Tracking.Status)
	require.Equal(t, int64(1), row.DeletionVector.Cardinality)

	r = vt.commit(t, vt.columnFile("a.parquet", "cf1.parquet", 3, []int{3}, s1))
	require.Equal(t, 200, r.status, "%s", r.body)
	row, _ = vt.liveRow(t, "a.parquet")
	require.NotNil(t, row.DeletionVector, "the DV stays with the base file")
	require.Equal(t, map[string][]int32{"cf1.parquet": {3}}, cfIDs(row))
}

// TestPurgeV4Table: purge deletes base, column and manifest files of a v4
// table (resolved from relative paths), never the directories.
func TestPurgeV4Table(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	vt := newV4Table(t, b, "wide", map[string]int{"a.parquet": 3})
	s1 := writeScores(t, filepath.Join(vt.dir, "data/cf1.parquet"), 3, 10, false, false)
	require.Equal(t, 200, vt.commit(t, vt.columnFile("a.parquet", "cf1.parquet", 3, []int{3}, s1)).status)
	_, snaps, _ := v4Meta(t, b.do(t, "GET", vt.path, nil))
	root := snaps[len(snaps)-1].RootManifest
	require.Equal(t, 204, b.do(t, "DELETE", vt.path+"?purgeRequested=true", nil).status)
	b.drainJobs(t)
	for _, f := range []string{"data/a.parquet", "data/cf1.parquet"} {
		_, err := os.Stat(filepath.Join(vt.dir, f))
		require.True(t, os.IsNotExist(err), "%s survived the purge", f)
	}
	_, err := os.Stat(strings.TrimPrefix(root, "file://"))
	require.True(t, os.IsNotExist(err), "root manifest survived the purge")
	require.DirExists(t, filepath.Join(vt.dir, "data"))
}

// TestColumnUpdateClearsSortOrder: a base file sorted by a field that a
// column file replaces is no longer known to be sorted.
func TestColumnUpdateClearsSortOrder(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	r := b.createTable(t, "ns", "sorted", map[string]any{"schema": rawJSON(wideSchemaJSON), "properties": map[string]string{"format-version": "4"},
		"write-order": rawJSON(`{"order-id":1,"fields":[{"source-id":3,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}`)})
	require.Equal(t, 200, r.status, "%s", r.body)
	loc, _, _ := v4Meta(t, r)
	vt := &v4Table{b: b, loc: loc, dir: strings.TrimPrefix(loc, "file://"), path: "/v1/wh/namespaces/ns/tables/sorted"}
	for _, name := range []string{"a.parquet", "b.parquet"} {
		size := writeBase(t, filepath.Join(vt.dir, "data", name), 3)
		r = b.do(t, "POST", vt.path+"/files", map[string]any{"add-data-files": []any{map[string]any{
			"location": "data/" + name, "file-format": "parquet", "record-count": 3, "file-size-in-bytes": size, "spec-id": 0, "sort-order-id": 1}}})
		require.Equal(t, 200, r.status, "%s", r.body)
	}
	s1 := writeScores(t, filepath.Join(vt.dir, "data/score.parquet"), 3, 1, false, false)
	require.Equal(t, 200, vt.commit(t, vt.columnFile("a.parquet", "score.parquet", 3, []int{3}, s1)).status)
	row, _ := vt.liveRow(t, "a.parquet")
	require.Nil(t, row.SortOrderID, "sorted by score, and score was replaced")
	l1 := writeParquet(t, filepath.Join(vt.dir, "data/label.parquet"),
		[]arrow.Field{{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: fieldMD(4)}},
		func(b *array.RecordBuilder) {
			b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "b", "c"}, nil)
		})
	require.Equal(t, 200, vt.commit(t, vt.columnFile("b.parquet", "label.parquet", 3, []int{4}, l1)).status)
	row, _ = vt.liveRow(t, "b.parquet")
	require.NotNil(t, row.SortOrderID, "label is not a sort field")
	require.Equal(t, int32(1), *row.SortOrderID)
}
