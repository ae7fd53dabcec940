package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/parquettest"
)

// v4FuzzSchema has a struct, a list and a map, so that bodies can name
// field ids that cannot carry stats or be column-updated.
const v4FuzzSchema = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"id","type":"long","required":true},
 {"id":2,"name":"data","type":"string","required":false},
 {"id":3,"name":"score","type":"double","required":false},
 {"id":4,"name":"st","type":{"type":"struct","fields":[{"id":5,"name":"x","type":"int","required":false}]},"required":false},
 {"id":6,"name":"tags","type":{"type":"list","element-id":7,"element":"string","element-required":false},"required":false},
 {"id":8,"name":"when","type":"timestamptz","required":false}]}`

// v4FuzzFiles are Parquet files every fuzzed table holds under data/
// (hard links to one written copy): a.parquet and b.parquet (3 rows, field
// ids, a committed before the body), noids.parquet (3 rows, no field
// ids), score.parquet (a column file for field 3), junk.parquet (not
// Parquet).
type v4FuzzFiles struct {
	dir   string
	sizes map[string]int64
}

func writeV4FuzzFiles(tb testing.TB) *v4FuzzFiles {
	fx := &v4FuzzFiles{dir: tb.TempDir(), sizes: map[string]int64{}}
	md := func(id int) arrow.Metadata { return fieldMD(id) }
	full := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: md(1)},
		{Name: "data", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: md(2)},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true, Metadata: md(3)},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true, Metadata: md(5)}), Nullable: true, Metadata: md(4)},
	}
	fill := func(b *array.RecordBuilder) {
		for i := 0; i < 3; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append("d")
			b.Field(2).(*array.Float64Builder).Append(float64(i))
			sb := b.Field(3).(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		}
	}
	for _, name := range []string{"a.parquet", "b.parquet"} {
		fx.sizes[name] = parquettest.Write(tb, filepath.Join(fx.dir, name), full, fill)
	}
	noIDs := make([]arrow.Field, 3)
	for i := range noIDs {
		noIDs[i] = full[i]
		noIDs[i].Metadata = arrow.Metadata{}
	}
	fx.sizes["noids.parquet"] = parquettest.Write(tb, filepath.Join(fx.dir, "noids.parquet"), noIDs, func(b *array.RecordBuilder) {
		for i := 0; i < 3; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append("d")
			b.Field(2).(*array.Float64Builder).Append(1)
		}
	})
	fx.sizes["score.parquet"] = parquettest.Write(tb, filepath.Join(fx.dir, "score.parquet"), []arrow.Field{full[2]}, func(b *array.RecordBuilder) {
		for i := 0; i < 3; i++ {
			b.Field(0).(*array.Float64Builder).Append(float64(10 * i))
		}
	})
	require.NoError(tb, os.WriteFile(filepath.Join(fx.dir, "junk.parquet"), []byte("not parquet"), 0o644))
	fx.sizes["junk.parquet"] = 11
	return fx
}

// newTable creates v4 table name with the files linked under its data/
// and a.parquet committed; it returns the table's location and path.
func (fx *v4FuzzFiles) newTable(t *testing.T, b *bundle, name string) (loc, path string) {
	r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": name, "schema": rawJSON(v4FuzzSchema),
		"properties": map[string]string{"format-version": "4"}}, "X-Iceberg-Column-Files", "true")
	require.Equal(t, 200, r.status, "%s", r.body)
	loc, _, _ = v4Meta(t, r)
	dir := filepath.Join(strings.TrimPrefix(loc, "file://"), "data")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for f := range fx.sizes {
		require.NoError(t, os.Link(filepath.Join(fx.dir, f), filepath.Join(dir, f)))
	}
	path = "/v1/wh/namespaces/ns/tables/" + name
	r = b.do(t, "POST", path+"/files", map[string]any{"add-data-files": []any{map[string]any{
		"location": "data/a.parquet", "file-format": "parquet", "record-count": 3, "file-size-in-bytes": fx.sizes["a.parquet"]}}},
		"X-Iceberg-Column-Files", "true")
	require.Equal(t, 200, r.status, "%s", r.body)
	return loc, path
}

// expand puts the table's location (TABLE) and the files' sizes
// (SIZE_A, SIZE_B, SIZE_NOIDS, SIZE_SCORE) into a seed body.
func (fx *v4FuzzFiles) expand(body []byte, loc string) string {
	s := strings.ReplaceAll(string(body), "TABLE", loc)
	for f, placeholder := range map[string]string{"a.parquet": "SIZE_A", "b.parquet": "SIZE_B", "noids.parquet": "SIZE_NOIDS", "score.parquet": "SIZE_SCORE"} {
		s = strings.ReplaceAll(s, placeholder, strconv.FormatInt(fx.sizes[f], 10))
	}
	return s
}

// fuzzV4Body posts each fuzzed body (the seeds, under
// testdata/fuzz/<target>, write TABLE for the table location and SIZE_A,
// SIZE_B, SIZE_NOIDS, SIZE_SCORE for the files' sizes) to route (files or
// column-files) of a v4 table holding a.parquet: the answer is a 200 or an
// Iceberg ErrorModel whose code is the status and below 500. A refused
// body changed nothing (same metadata location), so the next body goes to
// the same table; after a 200 the table must still take a valid commit,
// and the next body gets a fresh table.
func fuzzV4Body(f *testing.F, route string) {
	b := setupTB(f, "sqlite", nil)
	b.createNamespaceTB(f, "ns")
	fx := writeV4FuzzFiles(f)
	var mu sync.Mutex
	var n int
	var loc, path string // the current table; "" when the last body landed
	f.Fuzz(func(t *testing.T, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		if path == "" {
			n++
			loc, path = fx.newTable(t, b, "f"+strconv.Itoa(n))
		}
		before := metadataLocation(t, b, path)
		r := b.do(t, "POST", path+"/"+route, fx.expand(body, loc), "X-Iceberg-Column-Files", "true")
		if r.status != 200 {
			r.errorOf(t)
			require.Less(t, r.status, 500, "%s", r.body)
			require.Equal(t, before, metadataLocation(t, b, path), "a refused body committed something: %s", r.body)
			return
		}
		n++
		extra := "b-" + strconv.Itoa(n) + ".parquet"
		require.NoError(t, os.Link(filepath.Join(fx.dir, "b.parquet"), filepath.Join(strings.TrimPrefix(loc, "file://"), "data", extra)))
		r = b.do(t, "POST", path+"/files", map[string]any{"add-data-files": []any{map[string]any{
			"location": "data/" + extra, "file-format": "parquet", "record-count": 3, "file-size-in-bytes": fx.sizes["b.parquet"]}}},
			"X-Iceberg-Column-Files", "true")
		require.Equal(t, 200, r.status, "the table takes a valid commit after the fuzzed body: %s", r.body)
		path = ""
	})
}

// metadataLocation is the table's current metadata file.
func metadataLocation(t *testing.T, b *bundle, path string) string {
	r := b.do(t, "GET", path, nil, "X-Iceberg-Column-Files", "true")
	require.Equal(t, 200, r.status, "%s", r.body)
	loc, _ := r.json(t)["metadata-location"].(string)
	require.NotEmpty(t, loc)
	return loc
}

// FuzzFilesBody fuzzes POST .../files bodies end to end (real router,
// SQLite, real Parquet files under the table). The corpus
// (testdata/fuzz/FuzzFilesBody) holds valid
// bodies and the known-bad ones: a data file without field ids,
// content-stats keyed by a struct, list or element id, unknown ids,
// bounds of the wrong type, negative counts.
func FuzzFilesBody(f *testing.F) {
	fuzzV4Body(f, "files")
}

// FuzzColumnFilesBody fuzzes POST .../column-files bodies end to end, as
// FuzzFilesBody does the files route (corpus in
// testdata/fuzz/FuzzColumnFilesBody: a valid update, a column file
// without field ids, struct, element and reserved ids, wrong types).
func FuzzColumnFilesBody(f *testing.F) {
	fuzzV4Body(f, "column-files")
}

// TestV4BodyReasons: the known-bad bodies of the fuzz corpus are each a
// 400 with the reason a client can act on, the same one on both routes
// for a file without field ids; with the table's name mapping that file
// is accepted and its footer stats prune a plan.
func TestV4BodyReasons(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	fx := writeV4FuzzFiles(t)
	add := func(file, extra string) string {
		return `{"add-data-files":[{"location":"data/` + file + `","file-format":"parquet","record-count":3,"file-size-in-bytes":SIZE_` +
			strings.ToUpper(strings.TrimSuffix(file, ".parquet")) + extra + `}]}`
	}
	stats := func(s string) string { return `,"content-stats":` + s }
	for i, tc := range []struct{ route, body, reason string }{
		{"files", add("noids.parquet", ""), "missing-field-ids"},
		// Given stats do not skip the footer: the ids are checked all the same.
		{"files", add("noids.parquet", stats(`{"1":{"value-count":3}}`)), "missing-field-ids"},
		{"files", add("b.parquet", `,"record-count":4`+stats(`{"1":{"value-count":3}}`)), "record-count-mismatch"},
		{"column-files", `{"column-files":[{"data-file":"data/a.parquet","location":"data/noids.parquet","file-format":"parquet","field-ids":[3],"file-size-in-bytes":SIZE_NOIDS,"record-count":3}]}`, "missing-field-ids"},
		{"files", add("b.parquet", stats(`{"4":{"value-count":3}}`)), "content-stats-not-primitive"},
		{"files", add("b.parquet", stats(`{"6":{"value-count":3}}`)), "content-stats-not-primitive"},
		{"files", add("b.parquet", stats(`{"7":{"lower-bound":"a"}}`)), "content-stats-not-primitive"},
		{"files", add("b.parquet", stats(`{"99":{}}`)), "content-stats-unknown-field"},
		{"files", add("b.parquet", stats(`{"1":{"value-count":-1}}`)), "invalid-content-stats"},
		{"files", add("b.parquet", stats(`{"8":{"lower-bound":"yesterday"}}`)), "invalid-content-stats"},
		{"files", add("b.parquet", stats(`{"1":{"lower-bound":"zero"}}`)), "invalid-content-stats"},
		{"files", add("b.parquet", stats(`{"1":{"lower-bound":2,"upper-bound":1}}`)), "invalid-content-stats"},
		{"files", add("b.parquet", stats(`{"1":{"nan-value-count":1}}`)), "invalid-content-stats"},
		{"files", add("b.parquet", stats(`[1]`)), "invalid-content-stats"},
		{"files", add("b.parquet", `,"spec-id":7`), "invalid-file-entry"},
		{"files", `{}`, "empty-commit"},
		{"column-files", `{"column-files":[]}`, "empty-commit"},
	} {
		loc, path := fx.newTable(t, b, "t"+strconv.Itoa(i))
		r := b.do(t, "POST", path+"/"+tc.route, fx.expand([]byte(tc.body), loc))
		require.Equal(t, 400, r.status, "%s: %s", tc.body, r.body)
		require.Equal(t, tc.reason, r.json(t)["error"].(map[string]any)["reason"], "%s: %s", tc.body, r.body)
		require.NotContains(t, string(r.body), strings.TrimPrefix(loc, "file://"), "no server path in the answer")
	}

	loc, path := fx.newTable(t, b, "mapped")
	r := b.do(t, "POST", path, map[string]any{"updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{
		"schema.name-mapping.default": `[{"field-id":1,"names":["id"]},{"field-id":2,"names":["data"]},{"field-id":3,"names":["score"]}]`}}}})
	require.Equal(t, 200, r.status, "%s", r.body)
	r = b.do(t, "POST", path+"/files", fx.expand([]byte(add("noids.parquet", "")), loc))
	require.Equal(t, 200, r.status, "%s", r.body)
	plan := func(filter string) int {
		r := b.do(t, "POST", path+"/plan", map[string]any{"filter": rawJSON(filter)})
		require.Equal(t, 200, r.status, "%s", r.body)
		return len(r.json(t)["file-scan-tasks"].([]any))
	}
	require.Equal(t, 2, plan(`{"type":"gt-eq","term":"id","value":0}`))
	require.Equal(t, 0, plan(`{"type":"gt","term":"score","value":5}`), "score of both files is at most 2: pruned by the mapped file's stats too")
	require.Equal(t, 1, plan(`{"type":"lt","term":"score","value":0.5}`), "the name-mapped file's scores are all 1: pruned")

	r = b.do(t, "POST", path, map[string]any{"updates": []any{map[string]any{"action": "set-properties", "updates": map[string]string{
		"schema.name-mapping.default": `{"not":"a mapping"}`}}}})
	require.Equal(t, 200, r.status, "%s", r.body)
	r = b.do(t, "POST", path+"/files", fx.expand([]byte(add("b.parquet", "")), loc))
	require.Equal(t, 400, r.status, "%s", r.body)
	require.Equal(t, "invalid-name-mapping", r.json(t)["error"].(map[string]any)["reason"])
}
