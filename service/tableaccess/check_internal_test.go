package tableaccess

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/validation"
)

// metacheckTable is a v2 table with one snapshot (sequence number 1).
func metacheckTable(t *testing.T) (table.Metadata, []byte) {
	t.Helper()
	ts := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
	doc := `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"file:///t",
 "last-sequence-number":1,"last-updated-ms":` + ts + `,"last-column-id":1,"current-schema-id":0,
 "schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}],
 "default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,
 "default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],"properties":{},
 "current-snapshot-id":10,"refs":{"main":{"snapshot-id":10,"type":"branch"}},
 "snapshots":[{"snapshot-id":10,"sequence-number":1,"timestamp-ms":` + ts + `,"manifest-list":"file:///t/m.avro","summary":{"operation":"append"},"schema-id":0}],
 "snapshot-log":[{"snapshot-id":10,"timestamp-ms":` + ts + `}]}`
	m, version, err := tablemeta.Parse([]byte(doc))
	require.NoError(t, err)
	require.Equal(t, 2, version)
	return m, []byte(doc)
}

// appendSnapshot builds (with iceberg-go's builder) prev plus snapshot 11
// dated ts with the given sequence number, parented on 10, and serializes
// it as format version `version`.
func appendSnapshot(t *testing.T, prev table.Metadata, seq int64, ts time.Time, version int) (table.Metadata, []byte) {
	t.Helper()
	b, err := table.MetadataBuilderFromBase(prev, "file:///t/metadata/00000.metadata.json")
	require.NoError(t, err)
	parent := int64(10)
	require.NoError(t, b.AddSnapshot(&table.Snapshot{SnapshotID: 11, ParentSnapshotID: &parent, SequenceNumber: seq,
		TimestampMs: ts.UnixMilli(), ManifestList: "file:///t/m11.avro", Summary: &table.Summary{Operation: table.OpAppend}}))
	require.NoError(t, b.SetSnapshotRef(table.MainBranch, 11, table.BranchRef))
	next, err := b.Build()
	require.NoError(t, err)
	data, err := tablemeta.Marshal(next, version)
	require.NoError(t, err)
	return next, data
}

// testAccess checks metadata with the service's defaults: skew 0 is
// validation.DefaultMaxClockSkew, a nil clock is time.Now.
func testAccess(skew time.Duration, now func() time.Time) *Access {
	if skew == 0 {
		skew = validation.DefaultMaxClockSkew
	}
	if now == nil {
		now = time.Now
	}
	return New(Options{MaxClockSkew: skew, Clock: now})
}

func rejection(t *testing.T, err error) *fault.Error {
	t.Helper()
	require.Error(t, err)
	var e *fault.Error
	require.True(t, errors.As(err, &e), "want *fault.Error, got %T", err)
	require.Equal(t, fault.Validation, e.Kind)
	require.NotEmpty(t, e.Reason)
	require.NotEmpty(t, e.Message)
	return e
}

func TestCheckNewMetadata(t *testing.T) {
	a := testAccess(0, nil)
	prev, _ := metacheckTable(t)

	next, data := appendSnapshot(t, prev, 2, time.Now(), 2)
	require.NoError(t, a.CheckNewMetadata(prev, next, data))

	// A rule broken in the built metadata.
	next, data = appendSnapshot(t, prev, 2, time.Now().Add(time.Hour), 2)
	e := rejection(t, a.CheckNewMetadata(prev, next, data))
	require.Equal(t, validation.ReasonTimestampInFuture, e.Reason)
	require.Equal(t, int64(11), e.Details["snapshot-id"])

	// Bytes that would not load back: the last sequence number behind a snapshot.
	next, data = appendSnapshot(t, prev, 2, time.Now(), 2)
	bad := []byte(strings.Replace(string(data), `"last-sequence-number":2`, `"last-sequence-number":1`, 1))
	require.NotEqual(t, data, bad)
	e = rejection(t, a.CheckNewMetadata(prev, next, bad))
	require.Equal(t, validation.ReasonMetadataDoesNotLoad, e.Reason)
	require.Contains(t, e.Message, "would not load back")

	// Bytes that load but break a rule the built metadata kept: what is
	// stored is what counts.
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	doc["snapshots"].([]any)[1].(map[string]any)["parent-snapshot-id"] = 4242
	bad, err := json.Marshal(doc)
	require.NoError(t, err)
	e = rejection(t, a.CheckNewMetadata(prev, next, bad))
	require.Equal(t, validation.ReasonUnknownParentSnapshot, e.Reason)

	// Creation: no previous metadata.
	_, created := metacheckTable(t)
	createdMeta, _, err := tablemeta.Parse(created)
	require.NoError(t, err)
	require.NoError(t, a.CheckNewMetadata(nil, createdMeta, created))
}

// TestCheckNewMetadataV4: the v4 bytes are parsed back through the v3 view,
// as the loader does.
func TestCheckNewMetadataV4(t *testing.T) {
	a := testAccess(0, nil)
	prev, _ := metacheckTable(t)
	next, data := appendSnapshot(t, prev, 2, time.Now(), 4)
	require.Contains(t, string(data), `"root-manifest"`)
	require.NoError(t, a.CheckNewMetadata(prev, next, data))
	e := rejection(t, a.CheckNewMetadata(prev, next, []byte(strings.Replace(string(data), `"format-version":4`, `"format-version":5`, 1))))
	require.Equal(t, validation.ReasonMetadataDoesNotLoad, e.Reason)
}

// TestCheckNewMetadataClockSkew: Options.MaxClockSkew widens the default.
func TestCheckNewMetadataClockSkew(t *testing.T) {
	prev, _ := metacheckTable(t)
	next, data := appendSnapshot(t, prev, 2, time.Now().Add(10*time.Minute), 2)
	e := rejection(t, testAccess(0, nil).CheckNewMetadata(prev, next, data))
	require.Equal(t, validation.ReasonTimestampInFuture, e.Reason)
	require.NoError(t, testAccess(time.Hour, nil).CheckNewMetadata(prev, next, data))
}

// TestCheckNewMetadataClock: the skew check reads Options.Clock, so a
// replica whose clock runs behind refuses what a correct one accepts, and
// one whose clock runs ahead accepts a snapshot dated in the real future.
func TestCheckNewMetadataClock(t *testing.T) {
	prev, _ := metacheckTable(t)
	next, data := appendSnapshot(t, prev, 2, time.Now().Add(10*time.Minute), 2)
	ahead := func() time.Time { return time.Now().Add(20 * time.Minute) }
	require.NoError(t, testAccess(0, ahead).CheckNewMetadata(prev, next, data))
	next, data = appendSnapshot(t, prev, 2, time.Now(), 2)
	require.NoError(t, testAccess(0, nil).CheckNewMetadata(prev, next, data))
	behind := func() time.Time { return time.Now().Add(-10 * time.Minute) }
	e := rejection(t, testAccess(0, behind).CheckNewMetadata(prev, next, data))
	require.Equal(t, validation.ReasonTimestampInFuture, e.Reason)
}
