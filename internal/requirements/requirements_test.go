package requirements_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/requirements"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		raw, err string
	}{
		{``, ""},
		{`null`, ""},
		{`[]`, ""},
		{`[{"type":"assert-create"}]`, ""},
		{`[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}]`, ""},
		{`[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":7}]`, ""},
		{`{"type":"assert-create"}`, "Invalid requirements"},
		{`[{}]`, "Invalid requirement 0: missing type"},
		{`[{"type":"assert-nothing"}]`, "Unknown requirement type: assert-nothing"},
		{`[{"type":"assert-table-uuid"}]`, "missing field uuid"},
		{`[{"type":"assert-ref-snapshot-id","snapshot-id":1}]`, "missing field ref"},
		{`[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":"x"}]`, "snapshot-id must be a long or null"},
		{`[{"type":"assert-current-schema-id"}]`, "missing field current-schema-id"},
		{`[{"type":"assert-default-sort-order-id"}]`, "missing field default-sort-order-id"},
	} {
		_, err := requirements.Parse(json.RawMessage(tc.raw))
		if tc.err == "" {
			require.NoError(t, err, tc.raw)
			continue
		}
		require.Equal(t, fault.BadRequest, fault.KindOf(err), tc.raw)
		require.Contains(t, err.Error(), tc.err, tc.raw)
	}
}

// metadata is a fresh table (no snapshot, schema 0) with a main branch at
// snapshot 5 when withMain.
func metadata(t *testing.T, withMain bool) table.Metadata {
	t.Helper()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	m, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///t", nil)
	require.NoError(t, err)
	if !withMain {
		return m
	}
	b, err := table.MetadataBuilderFromBase(m, "")
	require.NoError(t, err)
	require.NoError(t, b.AddSnapshot(&table.Snapshot{SnapshotID: 5, SequenceNumber: 1, TimestampMs: m.LastUpdatedMillis() + 1,
		ManifestList: "file:///t/metadata/snap-5.avro", Summary: &table.Summary{Operation: table.OpAppend}, SchemaID: &sc.ID}))
	require.NoError(t, b.SetSnapshotRef("main", 5, table.BranchRef))
	m, err = b.Build()
	require.NoError(t, err)
	return m
}

func TestCheck(t *testing.T) {
	fresh, withMain := metadata(t, false), metadata(t, true)
	uuid := fresh.TableUUID().String()
	for _, tc := range []struct {
		name string
		m    table.Metadata
		raw  string
		fail string // "" when the requirements hold
	}{
		{"uuid holds, any case", fresh, `[{"type":"assert-table-uuid","uuid":"` + strings.ToUpper(uuid) + `"}]`, ""},
		{"uuid differs", fresh, `[{"type":"assert-table-uuid","uuid":"00000000-0000-0000-0000-000000000000"}]`, "UUID does not match"},
		{"table exists", fresh, `[{"type":"assert-create"}]`, "table already exists"},
		{"ref absent as expected", fresh, `[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}]`, ""},
		{"ref created concurrently", withMain, `[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}]`, "branch main was created concurrently"},
		{"ref moved", withMain, `[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":4}]`, "branch main has changed: expected id 4 != 5"},
		{"ref holds", withMain, `[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":5}]`, ""},
		{"ref missing", fresh, `[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":5}]`, "branch or tag main is missing, expected 5"},
		{"schema holds", fresh, `[{"type":"assert-current-schema-id","current-schema-id":0}]`, ""},
		{"schema changed", fresh, `[{"type":"assert-current-schema-id","current-schema-id":1}]`, "current schema changed: expected id 1 != 0"},
		{"last field id", fresh, `[{"type":"assert-last-assigned-field-id","last-assigned-field-id":2}]`, "last assigned field id changed"},
		{"spec holds", fresh, `[{"type":"assert-default-spec-id","default-spec-id":0}]`, ""},
		{"first failure wins", fresh, `[{"type":"assert-default-spec-id","default-spec-id":0},{"type":"assert-default-sort-order-id","default-sort-order-id":3}]`, "default sort order changed"},
	} {
		reqs, err := requirements.Parse(json.RawMessage(tc.raw))
		require.NoError(t, err, tc.name)
		err = requirements.Check(reqs, tc.m)
		if tc.fail == "" {
			require.NoError(t, err, tc.name)
			continue
		}
		require.Equal(t, fault.CommitFailed, fault.KindOf(err), tc.name)
		require.Contains(t, err.Error(), "Requirement failed: "+tc.fail, tc.name)
	}
	reqs, _ := requirements.Parse(json.RawMessage(`[{"type":"assert-create"}]`))
	require.True(t, requirements.HasAssertCreate(reqs))
}
