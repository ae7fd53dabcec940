package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

func arrowRows(t *testing.T, sc *iceberg.Schema, ids ...int64) arrow.Table {
	t.Helper()
	asc, err := table.SchemaToArrowSchema(sc, nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row-%d", id))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(asc, []arrow.RecordBatch{rec})
}

// idDataSchema is the schema the iceberg-go tables of these tests use.
func idDataSchema() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "data", Type: iceberg.PrimitiveTypes.String})
}

// goTable creates ns.name (and ns, when missing) with idDataSchema through
// iceberg-go's REST client, then appends the rows ids when there are any.
func goTable(t *testing.T, b *bundle, ns, name string, ids []int64, opts ...catalog.CreateTableOpt) *table.Table {
	t.Helper()
	ctx := context.Background()
	cat := restCatalog(t, b)
	_ = cat.CreateNamespace(ctx, table.Identifier{ns}, nil)
	tbl, err := cat.CreateTable(ctx, table.Identifier{ns, name}, idDataSchema(), opts...)
	require.NoError(t, err)
	if len(ids) > 0 {
		tbl, err = tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), ids...), 100, nil)
		require.NoError(t, err)
	}
	return tbl
}

// TestAppendThroughIcebergGo commits real snapshots (parquet data files,
// manifests) with iceberg-go's REST client and reads them back.
func TestAppendThroughIcebergGo(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			ctx := context.Background()
			cat := restCatalog(t, b)
			tbl := goTable(t, b, "db", "events", []int64{1, 2, 3})
			tbl, err := tbl.AppendTable(ctx, arrowRows(t, tbl.Schema(), 4, 5), 100, nil)
			require.NoError(t, err)

			loaded, err := cat.LoadTable(ctx, table.Identifier{"db", "events"})
			require.NoError(t, err)
			require.Len(t, loaded.Metadata().Snapshots(), 2)
			require.Equal(t, tbl.Metadata().CurrentSnapshot().SnapshotID, loaded.Metadata().CurrentSnapshot().SnapshotID)
			rows, err := loaded.Scan().ToArrowTable(ctx)
			require.NoError(t, err)
			defer rows.Release()
			require.EqualValues(t, 5, rows.NumRows())
			require.Len(t, slicesCollect(loaded.Metadata().PreviousFiles()), 2, "one metadata-log entry per commit")

			// snapshots=refs keeps only the branch head.
			r := b.do(t, "GET", "/v1/wh/namespaces/db/tables/events?snapshots=refs", nil)
			require.Equal(t, 200, r.status)
			var res struct {
				Metadata struct {
					Snapshots []json.RawMessage `json:"snapshots"`
				} `json:"metadata"`
			}
			require.NoError(t, json.Unmarshal(r.body, &res))
			require.Len(t, res.Metadata.Snapshots, 1)
			all := b.do(t, "GET", "/v1/wh/namespaces/db/tables/events?snapshots=all", nil)
			require.NotEqual(t, r.header.Get("ETag"), all.header.Get("ETag"), "representations differ, so tags differ")

			// Purge removes the referenced files but not the directory tree.
			dataFiles := 0
			files := mustTasks(t, loaded)
			for _, task := range files {
				dataFiles++
				require.FileExists(t, strings.TrimPrefix(task, "file://"))
			}
			require.Equal(t, 2, dataFiles)
			require.NoError(t, cat.PurgeTable(ctx, table.Identifier{"db", "events"}))
			b.drainJobs(t)
			for _, f := range files {
				_, err := os.Stat(strings.TrimPrefix(f, "file://"))
				require.True(t, os.IsNotExist(err), "dropped-with-purge file %s still exists", f)
			}
			_, err = os.Stat(strings.TrimPrefix(loaded.MetadataLocation(), "file://"))
			require.True(t, os.IsNotExist(err), "purge deletes the metadata file")
			require.DirExists(t, strings.TrimPrefix(loaded.Location(), "file://"), "purge never removes directories")
			_, err = cat.LoadTable(ctx, table.Identifier{"db", "events"})
			require.ErrorIs(t, err, catalog.ErrNoSuchTable)
		})
	}
}

func mustTasks(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	out := make([]string, 0, len(tasks))
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	return out
}

func slicesCollect[T any](seq func(func(T) bool)) []T {
	var out []T
	for v := range seq {
		out = append(out, v)
	}
	return out
}

// TestNoCometUnsafeDefaults: the catalog itself never sets table properties
// that make Comet's native Parquet writer fall back.
func TestNoCometUnsafeDefaults(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	r := b.createTable(t, "ns", "t", nil)
	require.Equal(t, 200, r.status)
	var res struct {
		Metadata struct {
			Properties map[string]string `json:"properties"`
		} `json:"metadata"`
		Config map[string]string `json:"config"`
	}
	require.NoError(t, json.Unmarshal(r.body, &res))
	for k := range res.Metadata.Properties {
		require.False(t, k == "write.object-storage.enabled" || k == "write.location-provider.impl" || k == "io-impl" ||
			strings.HasPrefix(k, "encryption.") || strings.HasPrefix(k, "parquet."), "property %s", k)
	}
	require.NotContains(t, res.Config, "io-impl")
	cfg := b.do(t, "GET", "/v1/config?warehouse=wh", nil).json(t)
	require.Empty(t, cfg["defaults"])
	require.Equal(t, map[string]any{"prefix": "wh"}, cfg["overrides"])
}

// TestNativeWriteEligibility reports every reason a table would make
// Comet's native writer fall back.
func TestNativeWriteEligibility(t *testing.T) {
	b := setup(t, "sqlite")
	b.createNamespace(t, "ns")
	// A table whose metadata says s3://: registered from a local metadata file
	// (no object store is needed to judge eligibility), in a warehouse on
	// s3://bucket that also allows that local directory.
	local := t.TempDir()
	wr := b.do(t, "POST", "/management/v1/warehouses", map[string]any{"name": "s3wh", "location": "s3://bucket",
		"properties": map[string]string{"allowed-locations": "file://" + local}})
	require.Equal(t, 200, wr.status, "%s", wr.body)
	require.Equal(t, 200, b.do(t, "POST", "/v1/s3wh/namespaces", map[string]any{"namespace": []string{"ns"}}).status)
	src := b.createTable(t, "ns", "src", nil)
	require.Equal(t, 200, src.status)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(src.body, &doc))
	meta := doc["metadata"].(map[string]any)
	meta["location"] = "s3://bucket/ns/plain"
	data, err := json.Marshal(meta)
	require.NoError(t, err)
	path := filepath.Join(local, "00000-plain.metadata.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	reg := b.do(t, "POST", "/v1/s3wh/namespaces/ns/register", map[string]any{"name": "plain", "metadata-location": "file://" + path})
	require.Equal(t, 200, reg.status, "%s", reg.body)
	r := b.do(t, "GET", "/v1/s3wh/namespaces/ns/tables/plain/native-write-eligibility", nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.JSONEq(t, `{"eligible":true,"reasons":[],"warnings":[]}`, string(r.body))

	require.Equal(t, 200, b.createTable(t, "ns", "fancy", map[string]any{"properties": map[string]string{
		"write.object-storage.enabled": "true", "parquet.enable.dictionary": "false", "format-version": "3"}}).status)
	r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/fancy/native-write-eligibility", nil)
	require.Equal(t, 200, r.status)
	var rep struct {
		Eligible bool `json:"eligible"`
		Reasons  []struct {
			Code string `json:"code"`
		} `json:"reasons"`
	}
	require.NoError(t, json.Unmarshal(r.body, &rep))
	require.False(t, rep.Eligible)
	codes := []string{}
	for _, x := range rep.Reasons {
		codes = append(codes, x.Code)
	}
	require.ElementsMatch(t, []string{"object-storage-layout", "parquet-mr-property"}, codes,
		"object storage layout and a parquet.* property; file:// and v3 are written natively")

	// Schema rules, through the parsed metadata: a uuid column and format
	// version 4 (identity on a double is written natively by Comet 1.2.0).
	schema := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"double","required":false},` +
		`{"id":2,"name":"u","type":"uuid","required":false}]}`
	spec := `{"spec-id":0,"fields":[{"source-id":1,"field-id":1000,"name":"x","transform":"identity"}]}`
	require.Equal(t, 200, b.createTable(t, "ns", "shaped", map[string]any{"schema": jsonRaw(schema),
		"partition-spec": jsonRaw(spec), "properties": map[string]string{"format-version": "4"}}).status)
	r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/shaped/native-write-eligibility", nil)
	require.Equal(t, 200, r.status)
	rep.Reasons = nil
	require.NoError(t, json.Unmarshal(r.body, &rep))
	codes = codes[:0]
	for _, x := range rep.Reasons {
		codes = append(codes, x.Code)
	}
	require.ElementsMatch(t, []string{"format-version", "column-type"}, codes, "%s", r.body)
	require.Equal(t, 404, b.do(t, "GET", "/v1/wh/namespaces/ns/tables/nope/native-write-eligibility", nil).status)
}
