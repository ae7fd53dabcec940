package server_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/openapi"
)

// TestPlanColumnChangesJSON: over HTTP, a column-file commit keeps
// next-row-id and adds no rows, and an incremental plan sent with
// X-Iceberg-Column-Files returns the changed base with our row-lineage
// and change-detection extension fields.
func TestPlanColumnChangesJSON(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := setup(t, backend)
			b.createNamespace(t, "ns")
			r := b.createTable(t, "ns", "c", map[string]any{"properties": map[string]string{"format-version": "4"},
				"schema": rawJSON(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"a","type":"long","required":false}]}`)})
			require.Equal(t, 200, r.status, "%s", r.body)
			loc, _, _ := v4Meta(t, r)
			dir := strings.TrimPrefix(loc, "file://")
			path := "/v1/wh/namespaces/ns/tables/c"
			write := func(name string, ids ...int) int64 {
				fields := make([]arrow.Field, len(ids))
				for i, id := range ids {
					fields[i] = arrow.Field{Name: "c" + string(rune('0'+id)), Type: arrow.PrimitiveTypes.Int64, Nullable: id != 1, Metadata: fieldMD(id)}
				}
				return writeParquet(t, filepath.Join(dir, "data", name), fields, func(rb *array.RecordBuilder) {
					for i := range ids {
						for row := int64(0); row < 3; row++ {
							rb.Field(i).(*array.Int64Builder).Append(row)
						}
					}
				})
			}
			size := write("base.parquet", 1, 2)
			r = b.do(t, "POST", path+"/files", map[string]any{"add-data-files": []any{map[string]any{
				"location": "data/base.parquet", "file-format": "parquet", "record-count": 3, "file-size-in-bytes": size}}})
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, nextRowID := v4Meta(t, r)
			start := snaps[len(snaps)-1].SnapshotID
			size = write("cf.parquet", 2)
			r = b.do(t, "POST", path+"/column-files", map[string]any{"column-files": []any{map[string]any{"data-file": "data/base.parquet",
				"location": "data/cf.parquet", "file-format": "parquet", "field-ids": []int{2}, "file-size-in-bytes": size, "record-count": 3}}})
			require.Equal(t, 200, r.status, "%s", r.body)
			_, snaps, after := v4Meta(t, r)
			require.Equal(t, nextRowID, after, "a column update assigns no row ids")
			end := snaps[len(snaps)-1]
			require.Zero(t, end.AddedRows)

			plan := b.do(t, "POST", path+"/plan", map[string]any{"start-snapshot-id": start, "end-snapshot-id": end.SnapshotID},
				"X-Iceberg-Column-Files", "true")
			require.Equal(t, 200, plan.status, "%s", plan.body)
			var res struct {
				Tasks []struct {
					DataFile map[string]json.RawMessage `json:"data-file"`
				} `json:"file-scan-tasks"`
			}
			require.NoError(t, json.Unmarshal(plan.body, &res))
			require.Len(t, res.Tasks, 1, "%s", plan.body)
			df := res.Tasks[0].DataFile
			require.JSONEq(t, "0", string(df["first-row-id"]))
			require.JSONEq(t, jsonInt(start), string(df["column-files-changed-since"]))
			require.JSONEq(t, jsonInt(end.SnapshotID), string(df["latest-column-file-snapshot-id"]))
			require.JSONEq(t, "2", string(df["data-sequence-number"]))
			var cfs []map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(df["column-files"], &cfs))
			require.Len(t, cfs, 1)
			require.JSONEq(t, "2", string(cfs[0]["sequence-number"]))
			strictPlan(t, plan.body)

			// Without the header the incremental plan is the append scan.
			plan = b.do(t, "POST", path+"/plan", map[string]any{"start-snapshot-id": start, "end-snapshot-id": end.SnapshotID},
				"X-Iceberg-Column-Files", "")
			require.Equal(t, 200, plan.status, "%s", plan.body)
			require.NoError(t, json.Unmarshal(plan.body, &res))
			require.Empty(t, res.Tasks)
		})
	}
}

// strictPlan asserts that a plan answer is the typed schema's: it
// validates against PlanTableScanResult of openapi/catalog.yaml (required
// fields, types) and decodes into the generated types with no field left
// over, so a key the server sends but the schema does not declare fails.
func strictPlan(t *testing.T, body []byte) openapi.PlanTableScanResult {
	t.Helper()
	conforms(t, "PlanTableScanResult", body)
	var res openapi.PlanTableScanResult
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&res), "%s", body)
	return res
}

func jsonInt(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}
