package validation

import (
	"encoding/json"
	"errors"
	"iter"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

// Timestamps of the fixtures, relative to the test's clock.
var (
	testNow = time.Now()
	tsOld   = testNow.Add(-2 * time.Hour).UnixMilli()
	tsLast  = testNow.Add(-1 * time.Hour).UnixMilli()
)

// v2Fixture: snapshots 10 ← 11 (sequence numbers 1, 2), main at 11, one
// bucket partition field 1000 over column 1.
const v2Fixture = `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"file:///t",
 "last-sequence-number":2,"last-updated-ms":TS_LAST,"last-column-id":2,"current-schema-id":0,
 "schemas":[{"type":"struct","schema-id":0,"identifier-field-ids":[1],"fields":[
   {"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"data","required":false,"type":"string"}]}],
 "default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[{"name":"id_bucket","transform":"bucket[4]","source-id":1,"field-id":1000}]}],
 "last-partition-id":1000,"default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],
 "properties":{},"current-snapshot-id":11,"refs":{"main":{"snapshot-id":11,"type":"branch"}},
 "snapshots":[
  {"snapshot-id":10,"sequence-number":1,"timestamp-ms":TS_OLD,"manifest-list":"file:///t/m10.avro","summary":{"operation":"append"},"schema-id":0},
  {"snapshot-id":11,"parent-snapshot-id":10,"sequence-number":2,"timestamp-ms":TS_LAST,"manifest-list":"file:///t/m11.avro","summary":{"operation":"append"},"schema-id":0}],
 "snapshot-log":[{"snapshot-id":10,"timestamp-ms":TS_OLD},{"snapshot-id":11,"timestamp-ms":TS_LAST}],
 "metadata-log":[{"metadata-file":"file:///t/metadata/00000.metadata.json","timestamp-ms":TS_OLD}]}`

// legacyV1Fixture is what old engines wrote: snapshot 5's parent 4 was
// expired, no snapshot names a schema, no sequence numbers.
const legacyV1Fixture = `{"format-version":1,"table-uuid":"1c12d441-03fe-4693-9a96-a0705ddf69c1","location":"file:///legacy",
 "last-updated-ms":TS_LAST,"last-column-id":2,
 "schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"data","required":false,"type":"string"}]},
 "partition-spec":[],"properties":{},"current-snapshot-id":6,
 "snapshots":[
  {"snapshot-id":5,"parent-snapshot-id":4,"timestamp-ms":TS_OLD,"manifest-list":"file:///legacy/m5.avro","summary":{"operation":"append"}},
  {"snapshot-id":6,"parent-snapshot-id":5,"timestamp-ms":TS_LAST,"manifest-list":"file:///legacy/m6.avro","summary":{"operation":"append"}}],
 "snapshot-log":[{"snapshot-id":5,"timestamp-ms":TS_OLD},{"snapshot-id":6,"timestamp-ms":TS_LAST}]}`

// legacyV2Fixture: an old v2 table with odd history a new commit must not
// trip over: 20's parent is gone, it names a schema that no longer exists,
// and 21 repeats its parent's sequence number.
const legacyV2Fixture = `{"format-version":2,"table-uuid":"2c12d441-03fe-4693-9a96-a0705ddf69c1","location":"file:///legacy2",
 "last-sequence-number":1,"last-updated-ms":TS_LAST,"last-column-id":2,"current-schema-id":0,
 "schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"data","required":false,"type":"string"}]}],
 "default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,
 "default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],"properties":{},"current-snapshot-id":21,
 "refs":{"main":{"snapshot-id":21,"type":"branch"}},
 "snapshots":[
  {"snapshot-id":20,"parent-snapshot-id":19,"sequence-number":1,"timestamp-ms":TS_OLD,"manifest-list":"file:///legacy2/m20.avro","summary":{"operation":"append"},"schema-id":7},
  {"snapshot-id":21,"parent-snapshot-id":20,"sequence-number":1,"timestamp-ms":TS_LAST,"manifest-list":"file:///legacy2/m21.avro","summary":{"operation":"append"}}],
 "snapshot-log":[]}`

// v3Fixture is v2Fixture at format version 3, next-row-id 100.
var v3Fixture = strings.Replace(strings.Replace(v2Fixture, `"format-version":2`, `"format-version":3,"next-row-id":100`, 1),
	`"summary":{"operation":"append"},"schema-id":0}]`, `"summary":{"operation":"append"},"schema-id":0,"first-row-id":0,"added-rows":10}]`, 1)

func fixture(t testing.TB, doc string) table.Metadata {
	t.Helper()
	doc = strings.NewReplacer("TS_OLD", strconv.FormatInt(tsOld, 10), "TS_LAST", strconv.FormatInt(tsLast, 10)).Replace(doc)
	m, err := table.ParseMetadataString(doc)
	require.NoError(t, err)
	return m
}

// commitUpdates applies a CommitTableRequest's updates to prev the way the
// catalog does (iceberg-go's decoder and builder); the builder must accept
// them, so that what is tested is what the builder lets through.
func commitUpdates(t testing.TB, prev table.Metadata, updates string) table.Metadata {
	t.Helper()
	updates = strings.NewReplacer(
		"TS_NOW", strconv.FormatInt(testNow.UnixMilli(), 10),
		"TS_LAST", strconv.FormatInt(tsLast, 10),
		"TS_SOON", strconv.FormatInt(testNow.Add(30*time.Second).UnixMilli(), 10),
		"TS_LATER", strconv.FormatInt(testNow.Add(2*time.Hour).UnixMilli(), 10),
	).Replace(updates)
	var ups table.Updates
	require.NoError(t, json.Unmarshal([]byte(updates), &ups))
	b, err := table.MetadataBuilderFromBase(prev, prev.Location()+"/metadata/00001.metadata.json")
	require.NoError(t, err)
	for _, u := range ups {
		require.NoError(t, u.Apply(b), "builder rejects %s", u.Action())
	}
	next, err := b.Build()
	require.NoError(t, err)
	return next
}

func metaReason(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var ve *Error
	require.True(t, errors.As(err, &ve), "want *Error, got %T %v", err, err)
	require.NotEmpty(t, ve.Message)
	return ve.Reason
}

func snap(id int64, parent string, seq int64, ts string, schema string) string {
	s := `{"snapshot-id":` + strconv.FormatInt(id, 10) + `,"sequence-number":` + strconv.FormatInt(seq, 10) +
		`,"timestamp-ms":` + ts + `,"manifest-list":"file:///t/m.avro","summary":{"operation":"append"}`
	if parent != "" {
		s += `,"parent-snapshot-id":` + parent
	}
	if schema != "" {
		s += `,"schema-id":` + schema
	}
	return `{"action":"add-snapshot","snapshot":` + s + `}}`
}

// lineageSnap is snapshot id (parent 11) with v3 row lineage fields.
func lineageSnap(id, seq, firstRowID, addedRows int64) string {
	return strings.Replace(snap(id, "11", seq, "TS_NOW", "0"), `"summary"`,
		`"first-row-id":`+strconv.FormatInt(firstRowID, 10)+`,"added-rows":`+strconv.FormatInt(addedRows, 10)+`,"summary"`, 1)
}

func setMain(id int64) string {
	return `{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":` + strconv.FormatInt(id, 10) + `}`
}

// TestTableMetadataCommits runs commits through iceberg-go's builder (which
// accepts all of them) and checks which ones TableMetadata lets through.
func TestTableMetadataCommits(t *testing.T) {
	addSchema := func(fields string, extra string) string {
		return `{"action":"add-schema","schema":{"type":"struct","schema-id":1` + extra + `,"fields":[` +
			`{"id":1,"name":"id","required":true,"type":"long"},{"id":2,"name":"data","required":false,"type":"string"}` + fields + `]}}`
	}
	cases := []struct {
		name    string
		base    string // fixture; "" = v2Fixture
		updates []string
		reason  string
	}{
		{"append", "", []string{snap(12, "11", 3, "TS_NOW", "0"), setMain(12)}, ""},
		{"append dated in the past", "", []string{snap(12, "11", 3, "TS_LAST", "0"), setMain(12)}, ""},
		{"append slightly ahead of the clock", "", []string{snap(12, "11", 3, "TS_SOON", ""), setMain(12)}, ""},
		{"two chained appends", "", []string{snap(12, "11", 3, "TS_NOW", "0"), snap(13, "12", 4, "TS_NOW", "0"), setMain(13)}, ""},
		{"parentless branch snapshot", "", []string{snap(12, "", 3, "TS_NOW", "0"), `{"action":"set-snapshot-ref","ref-name":"b","type":"branch","snapshot-id":12}`}, ""},
		{"expire the parent of main", "", []string{`{"action":"remove-snapshots","snapshot-ids":[10]}`}, ""},
		{"new column", "", []string{addSchema(`,{"id":3,"name":"x","required":false,"type":"int"}`, ""), `{"action":"set-current-schema","schema-id":-1}`}, ""},
		{"nested column", "", []string{addSchema(`,{"id":3,"name":"m","required":false,"type":{"type":"map","key-id":4,"key":"string","value-id":5,"value":{"type":"list","element-id":6,"element":"int","element-required":false},"value-required":false}}`, "")}, ""},
		{"new partition field", "", []string{`{"action":"add-spec","spec":{"fields":[{"name":"d","transform":"identity","source-id":2}]}}`}, ""},
		{"new sort order", "", []string{`{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"source-id":2,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}}`}, ""},
		{"legacy v1 set properties", legacyV1Fixture, []string{`{"action":"set-properties","updates":{"a":"b"}}`}, ""},
		{"legacy v1 append", legacyV1Fixture, []string{snap(7, "6", 0, "TS_NOW", ""), setMain(7)}, ""},
		{"legacy v1 upgrade to v2", legacyV1Fixture, []string{`{"action":"upgrade-format-version","format-version":2}`}, ""},
		{"legacy v1 upgrade and append", legacyV1Fixture, []string{`{"action":"upgrade-format-version","format-version":2}`, snap(7, "6", 1, "TS_NOW", "0"), setMain(7)}, ""},
		{"legacy v2 set properties", legacyV2Fixture, []string{`{"action":"set-properties","updates":{"a":"b"}}`}, ""},
		{"legacy v2 append", legacyV2Fixture, []string{snap(22, "21", 2, "TS_NOW", "0"), setMain(22)}, ""},

		{"parentless sequence numbers decreasing", "", []string{snap(12, "", 5, "TS_NOW", "0"), snap(13, "", 3, "TS_NOW", "0")}, ReasonSequenceNotIncreasing},
		{"parentless sequence number not above last (allowed, as in Java)", "", []string{snap(12, "", 2, "TS_NOW", "0")}, ""},
		{"dated in the future", "", []string{snap(12, "11", 3, "TS_LATER", "0"), setMain(12)}, ReasonTimestampInFuture},
		{"unknown parent", "", []string{snap(12, "4242", 3, "TS_NOW", "0")}, ReasonUnknownParentSnapshot},
		{"own parent", "", []string{snap(12, "12", 3, "TS_NOW", "0")}, ReasonUnknownParentSnapshot},
		{"unknown snapshot schema", "", []string{snap(12, "11", 3, "TS_NOW", "77")}, ReasonUnknownSchemaID},
		{"negative snapshot id", "", []string{snap(-5, "11", 3, "TS_NOW", "0")}, ReasonInvalidSnapshotID},
		{"negative field id", "", []string{addSchema(`,{"id":-3,"name":"x","required":false,"type":"long"}`, "")}, ReasonInvalidFieldID},
		{"zero nested field id", "", []string{addSchema(`,{"id":3,"name":"l","required":false,"type":{"type":"list","element-id":0,"element":"int","element-required":false}}`, "")}, ReasonInvalidFieldID},
		{"reserved field id", "", []string{addSchema(`,{"id":2147483600,"name":"x","required":false,"type":"long"}`, "")}, ReasonInvalidFieldID},
		{"unknown identifier field", "", []string{addSchema("", `,"identifier-field-ids":[9]`)}, ReasonUnknownFieldID},
		{"schema of kept snapshots removed", "", []string{addSchema(`,{"id":3,"name":"x","required":false,"type":"int"}`, ""),
			`{"action":"set-current-schema","schema-id":-1}`, `{"action":"remove-schemas","schema-ids":[0]}`}, ReasonUnknownSchemaID},
		{"sequence number at the end of the range", "", []string{snap(12, "11", math.MaxInt64, "TS_NOW", "0"), setMain(12)}, ReasonInvalidSequenceNumber},
		{"v3 append", v3Fixture, []string{lineageSnap(12, 3, 100, 5), setMain(12)}, ""},
		{"v3 first row id far ahead", v3Fixture, []string{lineageSnap(12, 3, 1<<40, 5), setMain(12)}, ""},
		{"v3 row ids at the end of the range", v3Fixture, []string{lineageSnap(12, 3, math.MaxInt64-2, 5), setMain(12)}, ReasonRowIDOutOfRange},
		{"v3 next-row-id at the end of the range", v3Fixture, []string{lineageSnap(12, 3, 100, 1<<62), setMain(12)}, ReasonRowIDOutOfRange},
		{"legacy v1 sequence number", legacyV1Fixture, []string{snap(7, "6", 5, "TS_NOW", ""), setMain(7)}, ReasonInvalidSequenceNumber},
		// A parentless snapshot may reuse an old sequence number, as the
		// Java reference allows: a replace transaction that lost a race to
		// another replace commits it (the REST compatibility kit does).
		{"legacy v2 stale parentless snapshot", legacyV2Fixture, []string{snap(22, "", 1, "TS_NOW", "0")}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if base == "" {
				base = v2Fixture
			}
			prev := fixture(t, base)
			next := commitUpdates(t, prev, "["+strings.Join(tc.updates, ",")+"]")
			require.Equal(t, tc.reason, metaReason(t, TableMetadata(prev, next, testNow, MetadataRules{})))
			if tc.reason == "" {
				// What the rules let through loads back.
				data, err := json.Marshal(next)
				require.NoError(t, err)
				_, err = table.ParseMetadataBytes(data)
				require.NoError(t, err, "accepted metadata does not load back")
			}
		})
	}
}

// TestTableMetadataCreate: with no previous metadata, everything is new.
func TestTableMetadataCreate(t *testing.T) {
	build := func(seq int64, ts int64) table.Metadata {
		b, err := table.NewMetadataBuilder(2)
		require.NoError(t, err)
		require.NoError(t, b.AddSchema(iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})))
		require.NoError(t, b.SetCurrentSchemaID(-1))
		require.NoError(t, b.AddPartitionSpec(iceberg.UnpartitionedSpec, true))
		require.NoError(t, b.SetDefaultSpecID(-1))
		require.NoError(t, b.AddSortOrder(&table.UnsortedSortOrder))
		require.NoError(t, b.SetDefaultSortOrderID(-1))
		require.NoError(t, b.SetLoc("file:///new"))
		require.NoError(t, b.AddSnapshot(&table.Snapshot{SnapshotID: 1, SequenceNumber: seq, TimestampMs: ts, ManifestList: "file:///new/m.avro",
			Summary: &table.Summary{Operation: table.OpAppend}}))
		m, err := b.Build()
		require.NoError(t, err)
		return m
	}
	require.NoError(t, TableMetadata(nil, build(1, testNow.UnixMilli()), testNow, MetadataRules{}))
	require.Equal(t, ReasonSequenceNotIncreasing, metaReason(t, TableMetadata(nil, build(0, testNow.UnixMilli()), testNow, MetadataRules{})))
	require.Equal(t, ReasonTimestampInFuture, metaReason(t, TableMetadata(nil, build(1, testNow.Add(time.Hour).UnixMilli()), testNow, MetadataRules{})))
	require.Equal(t, ReasonInvalidTimestamp, metaReason(t, TableMetadata(nil, build(1, -1), testNow, MetadataRules{})))
	require.Equal(t, ReasonMissingMetadata, metaReason(t, TableMetadata(nil, nil, testNow, MetadataRules{})))
}

// TestTableMetadataClockSkew: the allowed skew is configurable.
func TestTableMetadataClockSkew(t *testing.T) {
	prev := fixture(t, v2Fixture)
	next := commitUpdates(t, prev, "["+snap(12, "11", 3, "TS_LATER", "0")+","+setMain(12)+"]")
	require.Equal(t, ReasonTimestampInFuture, metaReason(t, TableMetadata(prev, next, testNow, MetadataRules{})))
	require.Equal(t, ReasonTimestampInFuture, metaReason(t, TableMetadata(prev, next, testNow, MetadataRules{MaxClockSkew: time.Hour})))
	require.NoError(t, TableMetadata(prev, next, testNow, MetadataRules{MaxClockSkew: 3 * time.Hour}))
	// The same metadata checked later, once the clock has caught up.
	require.NoError(t, TableMetadata(prev, next, testNow.Add(2*time.Hour), MetadataRules{}))
}

// fakeMeta overrides parts of real metadata to express states iceberg-go's
// builder refuses to build, for rules that guard other ways of building
// metadata (and a builder that may change).
type fakeMeta struct {
	table.Metadata
	noCurrentSchema bool
	defaultSpec     *int
	defaultOrder    *int
	refs            map[string]table.SnapshotRef
	lastSeq         *int64
	nextRowID       *int64
	lastColumnID    *int
	lastPartitionID *int
	schemas         []*iceberg.Schema
	specs           []iceberg.PartitionSpec
	orders          []table.SortOrder
	snapshotLog     []table.SnapshotLogEntry
	metadataLog     []table.MetadataLogEntry
	lastUpdated     *int64
	version         int
}

func (f *fakeMeta) Version() int {
	if f.version != 0 {
		return f.version
	}
	return f.Metadata.Version()
}

func (f *fakeMeta) CurrentSchema() *iceberg.Schema {
	if f.noCurrentSchema {
		panic("current schema is missing")
	}
	return f.Metadata.CurrentSchema()
}

func (f *fakeMeta) Schemas() []*iceberg.Schema {
	if f.schemas != nil {
		return f.schemas
	}
	return f.Metadata.Schemas()
}

func (f *fakeMeta) DefaultPartitionSpec() int {
	if f.defaultSpec != nil {
		return *f.defaultSpec
	}
	return f.Metadata.DefaultPartitionSpec()
}

func (f *fakeMeta) DefaultSortOrder() int {
	if f.defaultOrder != nil {
		return *f.defaultOrder
	}
	return f.Metadata.DefaultSortOrder()
}

func (f *fakeMeta) Refs() iter.Seq2[string, table.SnapshotRef] {
	if f.refs == nil {
		return f.Metadata.Refs()
	}
	return func(yield func(string, table.SnapshotRef) bool) {
		for k, v := range f.refs {
			if !yield(k, v) {
				return
			}
		}
	}
}

func (f *fakeMeta) LastSequenceNumber() int64 {
	if f.lastSeq != nil {
		return *f.lastSeq
	}
	return f.Metadata.LastSequenceNumber()
}

func (f *fakeMeta) NextRowID() int64 {
	if f.nextRowID != nil {
		return *f.nextRowID
	}
	return f.Metadata.NextRowID()
}

func (f *fakeMeta) LastColumnID() int {
	if f.lastColumnID != nil {
		return *f.lastColumnID
	}
	return f.Metadata.LastColumnID()
}

func (f *fakeMeta) LastPartitionSpecID() *int {
	if f.lastPartitionID != nil {
		return f.lastPartitionID
	}
	return f.Metadata.LastPartitionSpecID()
}

func (f *fakeMeta) PartitionSpecs() []iceberg.PartitionSpec {
	if f.specs != nil {
		return f.specs
	}
	return f.Metadata.PartitionSpecs()
}

func (f *fakeMeta) SortOrders() []table.SortOrder {
	if f.orders != nil {
		return f.orders
	}
	return f.Metadata.SortOrders()
}

func (f *fakeMeta) SnapshotLogs() iter.Seq[table.SnapshotLogEntry] {
	if f.snapshotLog == nil {
		return f.Metadata.SnapshotLogs()
	}
	return func(yield func(table.SnapshotLogEntry) bool) {
		for _, e := range f.snapshotLog {
			if !yield(e) {
				return
			}
		}
	}
}

func (f *fakeMeta) PreviousFiles() iter.Seq[table.MetadataLogEntry] {
	if f.metadataLog == nil {
		return f.Metadata.PreviousFiles()
	}
	return func(yield func(table.MetadataLogEntry) bool) {
		for _, e := range f.metadataLog {
			if !yield(e) {
				return
			}
		}
	}
}

func (f *fakeMeta) LastUpdatedMillis() int64 {
	if f.lastUpdated != nil {
		return *f.lastUpdated
	}
	return f.Metadata.LastUpdatedMillis()
}

func ptr[T any](v T) *T { return &v }

// TestTableMetadataStates covers the table-wide rules on states the builder
// would not produce.
func TestTableMetadataStates(t *testing.T) {
	v3 := fixture(t, v3Fixture)
	bucket := func(fieldID, source int) iceberg.PartitionField {
		return iceberg.PartitionField{SourceIDs: []int{source}, FieldID: fieldID, Name: "p" + strconv.Itoa(fieldID), Transform: iceberg.BucketTransform{NumBuckets: 4}}
	}
	withSpec := func(fields ...iceberg.PartitionField) []iceberg.PartitionSpec {
		return append(fixture(t, v2Fixture).PartitionSpecs(), iceberg.NewPartitionSpecID(1, fields...))
	}
	sortOn := func(source int) []table.SortOrder {
		o, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{source}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}})
		require.NoError(t, err)
		return append(fixture(t, v2Fixture).SortOrders(), o)
	}
	cases := []struct {
		name   string
		prev   table.Metadata // nil = v2 fixture
		next   func(f *fakeMeta)
		reason string
	}{
		{"unchanged", nil, func(f *fakeMeta) {}, ""},
		{"current schema missing", nil, func(f *fakeMeta) { f.noCurrentSchema = true }, ReasonUnknownSchemaID},
		{"default spec missing", nil, func(f *fakeMeta) { f.defaultSpec = ptr(5) }, ReasonUnknownPartitionSpecID},
		{"default sort order missing", nil, func(f *fakeMeta) { f.defaultOrder = ptr(5) }, ReasonUnknownSortOrderID},
		{"ref to missing snapshot", nil, func(f *fakeMeta) {
			f.refs = map[string]table.SnapshotRef{"main": {SnapshotID: 11, SnapshotRefType: table.BranchRef}, "b": {SnapshotID: 99, SnapshotRefType: table.BranchRef}}
		}, ReasonUnknownRefSnapshot},
		{"main is not the current snapshot", nil, func(f *fakeMeta) {
			f.refs = map[string]table.SnapshotRef{"main": {SnapshotID: 10, SnapshotRefType: table.BranchRef}}
		}, ReasonUnknownRefSnapshot},
		{"last sequence number below a snapshot", nil, func(f *fakeMeta) { f.lastSeq = ptr(int64(1)) }, ReasonSequenceNotIncreasing},
		{"last sequence number unchanged", nil, func(f *fakeMeta) { f.lastSeq = ptr(int64(2)) }, ""},
		{"next-row-id goes back", v3, func(f *fakeMeta) { f.nextRowID = ptr(int64(50)) }, ReasonRowLineageRegressed},
		{"next-row-id beyond the range", v3, func(f *fakeMeta) { f.nextRowID = ptr(int64(1)<<62 + 1) }, ReasonRowIDOutOfRange},
		{"last-column-id goes back", nil, func(f *fakeMeta) { f.lastColumnID = ptr(1) }, ReasonInvalidFieldID},
		{"new schema above last-column-id", nil, func(f *fakeMeta) {
			f.schemas = append(f.Metadata.Schemas(), iceberg.NewSchema(1, iceberg.NestedField{ID: 3, Name: "x", Type: iceberg.PrimitiveTypes.Int32}))
		}, ReasonInvalidFieldID},
		{"new spec ok", nil, func(f *fakeMeta) { f.specs, f.lastPartitionID = withSpec(bucket(1001, 2)), ptr(1001) }, ""},
		{"new spec field id not positive", nil, func(f *fakeMeta) { f.specs = withSpec(bucket(0, 2)) }, ReasonInvalidPartitionFieldID},
		{"new spec repeats a field id", nil, func(f *fakeMeta) { f.specs, f.lastPartitionID = withSpec(bucket(1001, 1), bucket(1001, 2)), ptr(1001) }, ReasonInvalidPartitionFieldID},
		{"new spec above last-partition-id", nil, func(f *fakeMeta) { f.specs = withSpec(bucket(1001, 2)) }, ReasonInvalidPartitionFieldID},
		{"new spec over a missing column", nil, func(f *fakeMeta) { f.specs, f.lastPartitionID = withSpec(bucket(1001, 9)), ptr(1001) }, ReasonUnknownFieldID},
		{"new sort order ok", nil, func(f *fakeMeta) { f.orders = sortOn(2) }, ""},
		{"new sort order over a missing column", nil, func(f *fakeMeta) { f.orders = sortOn(9) }, ReasonUnknownFieldID},
		{"snapshot log out of order", nil, func(f *fakeMeta) {
			f.snapshotLog = []table.SnapshotLogEntry{{SnapshotID: 11, TimestampMs: tsLast}, {SnapshotID: 10, TimestampMs: tsOld}}
		}, ReasonSnapshotLogOrder},
		{"snapshot log within tolerance", nil, func(f *fakeMeta) {
			f.snapshotLog = []table.SnapshotLogEntry{{SnapshotID: 10, TimestampMs: tsLast}, {SnapshotID: 11, TimestampMs: tsLast - 30_000}}
		}, ""},
		{"last-updated-ms before the snapshot log", nil, func(f *fakeMeta) { f.lastUpdated = ptr(tsOld) }, ReasonSnapshotLogOrder},
		{"metadata log out of order", nil, func(f *fakeMeta) {
			f.metadataLog = []table.MetadataLogEntry{{MetadataFile: "a", TimestampMs: tsLast}, {MetadataFile: "b", TimestampMs: tsOld}}
		}, ReasonMetadataLogOrder},
		{"last-updated-ms before the metadata log", nil, func(f *fakeMeta) {
			f.snapshotLog = []table.SnapshotLogEntry{}
			f.metadataLog = []table.MetadataLogEntry{{MetadataFile: "a", TimestampMs: tsLast}}
			f.lastUpdated = ptr(tsOld)
		}, ReasonMetadataLogOrder},
		{"last-updated-ms in the future", nil, func(f *fakeMeta) { f.lastUpdated = ptr(testNow.Add(time.Hour).UnixMilli()) }, ReasonTimestampInFuture},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prev := tc.prev
			if prev == nil {
				prev = fixture(t, v2Fixture)
			}
			next := &fakeMeta{Metadata: prev}
			tc.next(next)
			require.Equal(t, tc.reason, metaReason(t, TableMetadata(prev, next, testNow, MetadataRules{})))
		})
	}
	t.Run("last sequence number decreases", func(t *testing.T) {
		prev := &fakeMeta{Metadata: fixture(t, v2Fixture), lastSeq: ptr(int64(7))}
		require.Equal(t, ReasonSequenceNotIncreasing, metaReason(t, TableMetadata(prev, fixture(t, v2Fixture), testNow, MetadataRules{})))
	})
	t.Run("legacy future last-updated-ms kept", func(t *testing.T) {
		future := ptr(testNow.Add(time.Hour).UnixMilli())
		prev := &fakeMeta{Metadata: fixture(t, v2Fixture), lastUpdated: future}
		require.NoError(t, TableMetadata(prev, &fakeMeta{Metadata: prev.Metadata, lastUpdated: future}, testNow, MetadataRules{}))
	})
}
