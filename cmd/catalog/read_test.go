package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store/sqlstore"
)

// readFixture is a served catalog with v4 table ns.t: 100 rows k=0..99,
// v=k and s="row-k" in a base file, v then replaced by a column file
// (v=10k), rows 0 and 2 deleted by a deletion vector.
type readFixture struct {
	url       string
	svc       *service.Service
	ctx       context.Context
	dir       string // table directory
	seq       int64  // data sequence number of the column commit
	unflagged atomic.Int64
	bearer    atomic.Value // the last request's Authorization header
}

func newReadFixture(t *testing.T) *readFixture { return newReadFixtureWith(t, service.Options{}) }

// newReadFixtureWith is newReadFixture with service options.
func newReadFixtureWith(t *testing.T, opts service.Options) *readFixture {
	t.Helper()
	root := t.TempDir()
	fx := &readFixture{ctx: identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "test"})}
	st, err := sqlstore.OpenSQLite(fx.ctx, filepath.Join(root, "catalog.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Logger = quiet
	fx.svc = service.New(st, storage.NewProvider(), opts)
	_, err = fx.svc.CreateWarehouse(fx.ctx, "wh", "file://"+filepath.Join(root, "wh"), nil)
	require.NoError(t, err)
	_, err = fx.svc.CreateNamespace(fx.ctx, "wh", []string{"ns"}, nil)
	require.NoError(t, err)
	fx.dir = fx.createTable(t, "t")
	fx.fill(t, "t")

	srv := server.New(fx.svc, server.Config{DefaultWarehouse: "wh", Logger: quiet})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Iceberg-Column-Files") != "true" || r.Header.Get("X-Iceberg-Access-Delegation") != "vended-credentials" {
			fx.unflagged.Add(1)
		}
		fx.bearer.Store(r.Header.Get("Authorization"))
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	fx.url = hs.URL
	return fx
}

func (fx *readFixture) createTable(t *testing.T, name string) string {
	res, err := fx.svc.Tables().CreateTable(fx.ctx, "wh", []string{"ns"}, service.CreateTableInput{Name: name, Properties: map[string]string{"format-version": "4"},
		Schema: []byte(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"k","type":"long","required":true},{"id":2,"name":"v","type":"long","required":false},{"id":3,"name":"s","type":"string","required":false}]}`)})
	require.NoError(t, err)
	var meta struct {
		Location string `json:"location"`
	}
	require.NoError(t, json.Unmarshal(res.Metadata, &meta))
	return strings.TrimPrefix(meta.Location, "file://")
}

func longField(name, id string, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: nullable, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{id})}
}

// fill commits the base file, the column file for v and the DV.
func (fx *readFixture) fill(t *testing.T, name string) {
	id := service.Ident{Namespace: []string{"ns"}, Name: name}
	base := []arrow.Field{longField("k", "1", false), longField("v", "2", true),
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"3"})}}
	size := parquettest.Write(t, filepath.Join(fx.dir, "data/base.parquet"), base, func(b *array.RecordBuilder) {
		for i := 0; i < 100; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Int64Builder).Append(int64(i))
			b.Field(2).(*array.StringBuilder).Append("row-" + string(rune('a'+i%26)))
		}
	})
	_, err := fx.svc.CommitFiles(fx.ctx, "wh", service.FilesCommit{Ident: id, AddDataFiles: []service.DataFileInput{
		{Location: "data/base.parquet", FileFormat: "parquet", RecordCount: 100, FileSizeInBytes: size}}})
	require.NoError(t, err)
	csize := parquettest.Write(t, filepath.Join(fx.dir, "data/v.parquet"), []arrow.Field{longField("v", "2", true)}, func(b *array.RecordBuilder) {
		for i := 0; i < 100; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(10 * i))
		}
	})
	res, err := fx.svc.CommitColumnFiles(fx.ctx, "wh", service.ColumnFilesCommit{Ident: id, ColumnFiles: []service.ColumnFileInput{{
		DataFile: "data/base.parquet", Location: "data/v.parquet", FileFormat: "parquet", FieldIDs: []int{2}, FileSizeInBytes: csize, RecordCount: 100}}})
	require.NoError(t, err)
	var meta struct {
		LastSeq int64 `json:"last-sequence-number"`
	}
	require.NoError(t, json.Unmarshal(res.Metadata, &meta))
	fx.seq = meta.LastSeq

	w := dv.NewDVWriter(icebergio.LocalFS{}, func(int32) *iceberg.PartitionSpec { return iceberg.UnpartitionedSpec })
	require.NoError(t, w.Add("file://"+filepath.Join(fx.dir, "data/base.parquet"), []int64{0, 2}, 0, nil))
	files, err := w.Flush(context.Background(), "file://"+filepath.Join(fx.dir, "data/dv.puffin"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	_, err = fx.svc.CommitFiles(fx.ctx, "wh", service.FilesCommit{Ident: id, SetDeletionVectors: []service.DeletionVectorInput{{
		DataFile: "data/base.parquet", Location: "data/dv.puffin", Offset: *files[0].ContentOffset(), SizeInBytes: *files[0].ContentSizeInBytes(), Cardinality: files[0].Count()}}})
	require.NoError(t, err)
}

// read runs `catalog read` and returns stdout.
func (fx *readFixture) read(t *testing.T, args ...string) ([]byte, error) {
	var out, errb bytes.Buffer
	err := run(append([]string{"read", "--uri", fx.url}, args...), &out, &errb)
	return out.Bytes(), err
}

func jsonlRows(t *testing.T, data []byte) []map[string]any {
	var rows []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(sc.Text()))
		d.UseNumber()
		require.NoError(t, d.Decode(&m), sc.Text())
		rows = append(rows, m)
	}
	return rows
}

func num(t *testing.T, v any) int64 {
	n, err := v.(json.Number).Int64()
	require.NoError(t, err)
	return n
}

// TestReadCLI: the stitched table as jsonl (column file wins, DV rows
// gone, row lineage per docs/column-files.md), a filter on the updated
// column applied to rows, select, csv and an Arrow IPC stream, every
// request carrying the v4 and vended-credentials headers.
func TestReadCLI(t *testing.T) {
	fx := newReadFixture(t)

	out, err := fx.read(t, "--row-lineage", "ns.t")
	require.NoError(t, err)
	rows := jsonlRows(t, out)
	require.Len(t, rows, 98)
	for _, r := range rows {
		k := num(t, r["k"])
		require.NotContains(t, []int64{0, 2}, k)
		require.Equal(t, 10*k, num(t, r["v"]), "v of k=%d comes from the column file", k)
		require.Equal(t, k, num(t, r["_row_id"]), "first_row_id 0 + position")
		require.Equal(t, fx.seq, num(t, r["_last_updated_sequence_number"]))
		require.Equal(t, "row-"+string(rune('a'+k%26)), r["s"])
	}

	// v < 50 holds for k = 0..4 of the column file's values; 0 and 2 are deleted.
	out, err = fx.read(t, "ns.t", "--select", "s", "--filter", `{"type":"lt","term":"v","value":50}`)
	require.NoError(t, err)
	rows = jsonlRows(t, out)
	require.Len(t, rows, 3)
	for _, r := range rows {
		require.Len(t, r, 1, "only the selected column")
	}
	require.Equal(t, []any{"row-b", "row-d", "row-e"}, []any{rows[0]["s"], rows[1]["s"], rows[2]["s"]})

	out, err = fx.read(t, "--format", "csv", "--select", "k,v", "--filter", `{"type":"eq","term":"k","value":3}`, "ns.t")
	require.NoError(t, err)
	require.Equal(t, "k,v\n3,30\n", string(out))

	out, err = fx.read(t, "--format", "arrow", "--row-lineage", "ns.t")
	require.NoError(t, err)
	rd, err := ipc.NewReader(bytes.NewReader(out))
	require.NoError(t, err)
	defer rd.Release()
	var n int64
	for rd.Next() {
		rec := rd.RecordBatch()
		n += rec.NumRows()
		vals := rec.Column(1).(*array.Int64).Int64Values()
		keys := rec.Column(0).(*array.Int64).Int64Values()
		for i := range keys {
			require.Equal(t, 10*keys[i], vals[i])
		}
	}
	require.NoError(t, rd.Err())
	require.Equal(t, int64(98), n)
	var names []string
	for _, f := range rd.Schema().Fields() {
		id, _ := f.Metadata.GetValue("PARQUET:field_id")
		names = append(names, f.Name+"="+id)
	}
	require.Equal(t, []string{"k=1", "v=2", "s=3", "_row_id=2147483540", "_last_updated_sequence_number=2147483539"}, names)
	require.Zero(t, fx.unflagged.Load(), "every request carries X-Iceberg-Column-Files and vended-credentials")

	_, err = fx.read(t, "--token", "tok123", "--select", "k", "ns.t")
	require.NoError(t, err)
	require.Equal(t, "Bearer tok123", fx.bearer.Load())
	// This catalog runs without authentication: the sign-in's refusal is
	// shown as the catalog gave it.
	_, err = fx.read(t, "--credential", "id:secret", "ns.t")
	require.ErrorContains(t, err, "authentication is not enabled")
}

// TestReadCLIParquetOut: --out FILE.parquet writes the stitched rows as
// one Parquet file carrying the field ids, and a read that fails leaves
// no file.
func TestReadCLIParquetOut(t *testing.T) {
	fx := newReadFixture(t)
	path := filepath.Join(t.TempDir(), "t.parquet")
	out, err := fx.read(t, "--row-lineage", "--out", path, "ns.t")
	require.NoError(t, err)
	require.Empty(t, out, "nothing on stdout")
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	require.NoError(t, err)
	require.Equal(t, int64(98), pf.NumRows())
	var ids []string
	root := pf.MetaData().Schema.Root()
	for i := 0; i < root.NumFields(); i++ {
		ids = append(ids, fmt.Sprintf("%s=%d", root.Field(i).Name(), root.Field(i).FieldID()))
	}
	require.Equal(t, []string{"k=1", "v=2", "s=3", "_row_id=2147483540", "_last_updated_sequence_number=2147483539"}, ids)
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer tbl.Release()
	keys, vals := tbl.Column(0).Data().Chunks(), tbl.Column(1).Data().Chunks()
	for c := range keys {
		k, v := keys[c].(*array.Int64).Int64Values(), vals[c].(*array.Int64).Int64Values()
		for i := range k {
			require.Equal(t, 10*k[i], v[i], "the column file's values")
		}
	}

	missing := filepath.Join(t.TempDir(), "nope.parquet")
	_, err = fx.read(t, "--out", missing, "ns.nope")
	require.ErrorContains(t, err, "NoSuchTableException")
	entries, _ := os.ReadDir(filepath.Dir(missing))
	require.Empty(t, entries, "a failed read leaves neither the file nor its temporary")
}

// TestReadCLIRefusals: clear errors for a missing table, an unknown
// column, a bad filter, a bad format and a missing --uri; no rows written.
func TestReadCLIRefusals(t *testing.T) {
	fx := newReadFixture(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ns.nope"}, "NoSuchTableException"},
		{[]string{"--select", "zz", "ns.t"}, `"zz" is not a top-level column`},
		{[]string{"--filter", `{"type":"lt","term":"zz","value":1}`, "ns.t"}, "--filter"},
		{[]string{"--filter", `{`, "ns.t"}, "not valid JSON"},
		{[]string{"--format", "xml", "ns.t"}, "want csv, jsonl, arrow or parquet"},
		{[]string{"--out", "", "ns.t"}, "--out needs a file name"},
		{[]string{"--snapshot-id", "12345", "ns.t"}, "no snapshot 12345"},
		{[]string{"--snapshot", "12345", "ns.t"}, "no snapshot 12345"},
		{[]string{"nodot"}, "want NAMESPACE.TABLE"},
		{[]string{"--credential", "nocolon", "ns.t"}, "CLIENT_ID:SECRET"},
	} {
		out, err := fx.read(t, tc.args...)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
		require.Empty(t, out, "%v", tc.args)
	}
	var out, errb bytes.Buffer
	require.ErrorContains(t, run([]string{"read", "--uri", "", "ns.t"}, &out, &errb), "--uri is empty")
}

// TestReadCLIDefaultURI: without --uri, read talks to the local catalog:
// $CATALOG_URI, else the address serve listens on ($CATALOG_LISTEN, a
// wildcard host read as loopback, else 127.0.0.1:8181).
func TestReadCLIDefaultURI(t *testing.T) {
	fx := newReadFixture(t)
	want, err := fx.read(t, "ns.t")
	require.NoError(t, err)
	require.NotEmpty(t, want)
	t.Setenv("CATALOG_URI", fx.url)
	var out, errb bytes.Buffer
	require.NoError(t, run([]string{"read", "ns.t"}, &out, &errb), errb.String())
	require.Equal(t, string(want), out.String())

	t.Setenv("CATALOG_URI", "")
	u, err := url.Parse(fx.url)
	require.NoError(t, err)
	t.Setenv("CATALOG_LISTEN", ":"+u.Port())
	out.Reset()
	require.NoError(t, run([]string{"read", "ns.t"}, &out, &errb), errb.String())
	require.Equal(t, string(want), out.String())

	t.Setenv("CATALOG_LISTEN", "")
	require.Equal(t, "http://127.0.0.1:8181", localCatalogURI())
}

// TestReadCLIPlanTasks: a plan too large to answer inline comes back as
// plan tasks, which the CLI fetches (POST .../tasks) to read every file.
func TestReadCLIPlanTasks(t *testing.T) {
	fx := newReadFixtureWith(t, service.Options{MaxPlanTasks: 1})
	id := service.Ident{Namespace: []string{"ns"}, Name: "t"}
	for _, name := range []string{"more1.parquet", "more2.parquet"} {
		size := parquettest.Write(t, filepath.Join(fx.dir, "data", name), []arrow.Field{longField("k", "1", false)}, func(b *array.RecordBuilder) {
			for i := 0; i < 10; i++ {
				b.Field(0).(*array.Int64Builder).Append(int64(1000 + i))
			}
		})
		_, err := fx.svc.CommitFiles(fx.ctx, "wh", service.FilesCommit{Ident: id, AddDataFiles: []service.DataFileInput{
			{Location: "data/" + name, FileFormat: "parquet", RecordCount: 10, FileSizeInBytes: size}}})
		require.NoError(t, err)
	}
	var ans struct {
		PlanTasks []string `json:"plan-tasks"`
	}
	req, err := http.NewRequest(http.MethodPost, fx.url+"/v1/wh/namespaces/ns/tables/t/plan", strings.NewReader(`{"case-sensitive":true}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(service.ColumnFilesHeader, "true")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ans))
	require.NotEmpty(t, ans.PlanTasks, "the fixture must exercise plan tasks")
	out, err := fx.read(t, "--select", "k", "ns.t")
	require.NoError(t, err)
	rows := jsonlRows(t, out)
	require.Len(t, rows, 98+20)
}

// TestReadCLIRefusesEqualityDeletes: stitch does not apply equality
// deletes, so a plan that has them is refused rather than read with
// deleted rows in it.
func TestReadCLIRefusesEqualityDeletes(t *testing.T) {
	fx := newReadFixture(t)
	dir := fx.createTable(t, "eq")
	id := service.Ident{Namespace: []string{"ns"}, Name: "eq"}
	size := parquettest.Write(t, filepath.Join(dir, "data/base.parquet"), []arrow.Field{longField("k", "1", false)}, func(b *array.RecordBuilder) {
		for i := 0; i < 5; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
		}
	})
	_, err := fx.svc.CommitFiles(fx.ctx, "wh", service.FilesCommit{Ident: id, AddDataFiles: []service.DataFileInput{
		{Location: "data/base.parquet", FileFormat: "parquet", RecordCount: 5, FileSizeInBytes: size}}})
	require.NoError(t, err)
	dsize := parquettest.Write(t, filepath.Join(dir, "data/eq.parquet"), []arrow.Field{longField("k", "1", false)}, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Int64Builder).Append(3)
	})
	_, err = fx.svc.CommitFiles(fx.ctx, "wh", service.FilesCommit{Ident: id, AddEqualityDeleteFiles: []service.EqualityDeleteInput{
		{Location: "data/eq.parquet", FileFormat: "parquet", RecordCount: 1, FileSizeInBytes: dsize, EqualityIDs: []int{1}}}})
	require.NoError(t, err)
	out, err := fx.read(t, "ns.eq")
	require.ErrorContains(t, err, "equality deletes")
	require.Empty(t, out)
}

// TestReadCLIEmptyTable: a table without snapshots still gives a
// well-formed answer: an Arrow stream with the schema and no rows, a csv
// header, no jsonl lines.
func TestReadCLIEmptyTable(t *testing.T) {
	fx := newReadFixture(t)
	fx.createTable(t, "empty")
	out, err := fx.read(t, "--format", "arrow", "ns.empty")
	require.NoError(t, err)
	rd, err := ipc.NewReader(bytes.NewReader(out))
	require.NoError(t, err)
	defer rd.Release()
	require.Equal(t, 3, rd.Schema().NumFields())
	require.False(t, rd.Next())
	require.NoError(t, rd.Err())
	out, err = fx.read(t, "--format", "csv", "ns.empty")
	require.NoError(t, err)
	require.Equal(t, "k,v,s\n", string(out))
	out, err = fx.read(t, "ns.empty")
	require.NoError(t, err)
	require.Empty(t, out)
}
