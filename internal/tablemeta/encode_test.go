package tablemeta

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
)

// updateGen writes random commit updates as JSON, as clients send them,
// against the current state of a table.
type updateGen struct {
	r       *rand.Rand
	version int
	nextID  int64
}

func (g *updateGen) update(m table.Metadata) string {
	snaps := m.Snapshots()
	anySnap := func() int64 {
		if len(snaps) == 0 {
			return 1
		}
		return snaps[g.r.Intn(len(snaps))].SnapshotID
	}
	k := g.r.Intn(6)
	switch g.r.Intn(12) {
	case 0, 1:
		return fmt.Sprintf(`{"action":"set-properties","updates":{"k%d":"v%d","s\"q":"é%d"}}`, k, g.r.Int(), k)
	case 2:
		return fmt.Sprintf(`{"action":"remove-properties","removals":["k%d"]}`, k)
	case 3, 4, 5:
		id := g.nextID
		g.nextID++
		parent := ""
		if cur := m.CurrentSnapshot(); cur != nil {
			parent = fmt.Sprintf(`"parent-snapshot-id":%d,`, cur.SnapshotID)
		}
		lineage := ""
		if g.version >= 3 {
			lineage = fmt.Sprintf(`,"first-row-id":%d,"added-rows":%d`, m.NextRowID(), 10+k)
		}
		return fmt.Sprintf(`{"action":"add-snapshot","snapshot":{"snapshot-id":%d,%s"sequence-number":%d,"timestamp-ms":%d,`+
			`"manifest-list":"file:///wh/t/metadata/snap-%d.avro","summary":{"operation":"append","added-records":"%d"},"schema-id":%d%s}}`,
			id, parent, m.LastSequenceNumber()+1, m.LastUpdatedMillis()+1, id, k, m.CurrentSchema().ID, lineage)
	case 6:
		name, typ := []string{"main", "b1", "t1"}[k%3], "branch"
		if name == "t1" {
			typ = "tag"
		}
		return fmt.Sprintf(`{"action":"set-snapshot-ref","ref-name":%q,"type":%q,"snapshot-id":%d}`, name, typ, anySnap())
	case 7:
		col := m.LastColumnID() + 1
		return fmt.Sprintf(`{"action":"add-schema","schema":{"type":"struct","schema-id":%d,"fields":[`+
			`{"id":1,"name":"id","type":"long","required":true},{"id":%d,"name":"c%d","type":"string","required":false}]}}`,
			len(m.Schemas()), col, col)
	case 8:
		return `{"action":"set-current-schema","schema-id":-1}`
	case 9:
		if k%2 == 0 {
			return fmt.Sprintf(`{"action":"add-spec","spec":{"fields":[{"source-id":1,"field-id":%d,"name":"p%d","transform":"bucket[%d]"}]}}`,
				1000+k, k, k+2)
		}
		return fmt.Sprintf(`{"action":"add-sort-order","sort-order":{"order-id":%d,"fields":[{"source-id":1,"transform":"identity","direction":"%s","null-order":"nulls-first"}]}}`,
			k+1, []string{"asc", "desc"}[k%2])
	case 10:
		if k%2 == 0 {
			return fmt.Sprintf(`{"action":"set-location","location":"file:///wh/t%d"}`, k)
		}
		return fmt.Sprintf(`{"action":"set-statistics","snapshot-id":%[1]d,"statistics":{"snapshot-id":%[1]d,"statistics-path":"file:///wh/t/s-%[1]d.puffin",`+
			`"file-size-in-bytes":100,"file-footer-size-in-bytes":10,"blob-metadata":[]}}`, anySnap())
	default:
		return fmt.Sprintf(`{"action":"remove-snapshots","snapshot-ids":[%d,%d]}`, anySnap(), anySnap())
	}
}

// applyJSON applies updates (JSON) to base through iceberg-go's builder.
func applyJSON(t *testing.T, base table.Metadata, loc string, ups []string) (table.Metadata, error) {
	t.Helper()
	var parsed table.Updates
	require.NoError(t, json.Unmarshal([]byte("["+strings.Join(ups, ",")+"]"), &parsed))
	b, err := table.MetadataBuilderFromBase(base, loc)
	require.NoError(t, err)
	for _, u := range parsed {
		if err := u.Apply(b); err != nil {
			return nil, err
		}
	}
	return b.Build()
}

func parseUpdates(t *testing.T, ups []string) table.Updates {
	t.Helper()
	var parsed table.Updates
	require.NoError(t, json.Unmarshal([]byte("["+strings.Join(ups, ",")+"]"), &parsed))
	return parsed
}

// buildJSON applies updates (JSON) to a cached entry as a commit does
// (Build: the light builder when it applies).
func buildJSON(t *testing.T, prev *Entry, loc string, ups []string) (table.Metadata, error) {
	t.Helper()
	meta, _, err := Build(prev, loc, false, parseUpdates(t, ups), ReadUpdates([]byte("["+strings.Join(ups, ",")+"]")))
	return meta, err
}

// withoutClock is a document's JSON value without what a build stamps with
// the clock: last-updated-ms and the snapshot-log timestamps (a rollback
// logs the time of the build). The encoding itself is compared exactly.
func withoutClock(t *testing.T, data []byte) any {
	v := jsonValue(t, data).(map[string]any)
	delete(v, "last-updated-ms")
	log, _ := v["snapshot-log"].([]any)
	for _, e := range log {
		delete(e.(map[string]any), "timestamp-ms")
	}
	return v
}

func jsonValue(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(data, &v), "%s", data)
	return v
}

// TestEncodeFastRoundTrip is the round-trip property of the commit fast
// path: random sequences of commits are applied twice, once as the slow
// path does (parse the stored document, build, encode everything) and once
// as the fast path does (build from the cached metadata, splice the
// previous document's snapshots). After every commit the two documents
// must be the same JSON and read back into equal metadata; the refs-only
// document must be RefsOnly's; the check document must pass SameEncoded.
func TestEncodeFastRoundTrip(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	for version := 1; version <= FormatV4; version++ {
		for seed := 0; seed < seeds; seed++ {
			t.Run(fmt.Sprintf("v%d/seed%d", version, seed), func(t *testing.T) {
				roundTrip(t, version, int64(seed))
			})
		}
	}
}

func roundTrip(t *testing.T, version int, seed int64) {
	view := min(version, 3)
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	start, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///wh/t",
		iceberg.Properties{"format-version": fmt.Sprint(view)})
	require.NoError(t, err)
	data, err := Marshal(start, version)
	require.NoError(t, err)
	entry, err := NewEntry(data)
	require.NoError(t, err)
	loc := "file:///wh/t/metadata/00000.metadata.json"
	g := &updateGen{r: rand.New(rand.NewSource(seed)), version: view, nextID: 1}
	applied, light := 0, 0
	for commit := 0; commit < 40; commit++ {
		stored, _, err := Parse(entry.Data) // what the slow path builds on
		require.NoError(t, err)
		ups := make([]string, 1+g.r.Intn(4))
		for i := range ups {
			ups[i] = g.update(stored)
		}
		want, errSlow := applyJSON(t, stored, loc, ups)
		got, errFast := buildJSON(t, entry, loc, ups)
		if _, _, ok := lightBase(entry.Meta, parseUpdates(t, ups), ReadUpdates([]byte("["+strings.Join(ups, ",")+"]"))); ok {
			light++
		}
		require.Equal(t, errSlow == nil, errFast == nil, "commit %d %v: slow path error %v, fast path error %v", commit, ups, errSlow, errFast)
		if errSlow != nil {
			require.Equal(t, fault.ClientText(errSlow), fault.ClientText(errors.Unwrap(errFast)), "commit %d %v: the errors differ", commit, ups)
			continue
		}
		applied++
		// Building on the cached metadata is building on the stored one
		// (up to the clock: each build stamps last-updated-ms).
		wantData, err := Marshal(want, version)
		require.NoError(t, err)
		gotData, err := Marshal(got, version)
		require.NoError(t, err)
		require.Equal(t, withoutClock(t, wantData), withoutClock(t, gotData), "commit %d %v", commit, ups)

		// The fast encoding is the slow one, and reads back as what was built.
		enc, ok, err := Encode(got, version, entry)
		require.NoError(t, err)
		require.True(t, ok, "the fast path must apply to iceberg-go's metadata types")
		require.Equal(t, jsonValue(t, gotData), jsonValue(t, enc.Data), "commit %d %v", commit, ups)
		for _, key := range []string{`"snapshots":`, `"snapshot-log":`, `"format-version":`} {
			require.LessOrEqual(t, strings.Count(string(enc.Data), key), 1, "%s written twice", key)
		}
		back, _, err := Parse(enc.Data)
		require.NoError(t, err)
		require.True(t, got.Equals(back), "commit %d %v: the document does not read back as the builder's metadata", commit, ups)

		refs, err := RefsOnly(enc.Data)
		require.NoError(t, err)
		require.Equal(t, jsonValue(t, refs), jsonValue(t, enc.Refs), "commit %d: refs-only document", commit)
		checkBack, _, err := Parse(enc.Check)
		require.NoError(t, err, "commit %d: check document", commit)
		require.NoError(t, SameEncoded(got, checkBack, enc), "commit %d", commit)

		loc = fmt.Sprintf("file:///wh/t/metadata/%05d.metadata.json", commit+1)
		entry = &Entry{Meta: got, Version: version, Data: enc.Data, Spans: enc.Spans, NSnaps: len(enc.Spans)}
	}
	require.Greater(t, applied, 10, "too few commits applied for the property to mean anything")
	require.Greater(t, light, 5, "too few commits took the light builder for the property to cover it")
	t.Logf("%d commits applied (%d on the light builder), %d snapshots at the end", applied, light, entry.NSnaps)
}

// TestEncodeFastReusesSnapshotBytes: snapshots the previous document held
// are copied as they were written, including fields iceberg-go would not
// write (so the copy, not a re-encoding, is what lands).
func TestEncodeFastReusesSnapshotBytes(t *testing.T) {
	doc := `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"file:///wh/t",` +
		`"last-sequence-number":1,"last-updated-ms":1700000000000,"last-column-id":1,"current-schema-id":0,` +
		`"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}],` +
		`"default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,` +
		`"default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],"current-snapshot-id":7,` +
		`"refs":{"main":{"snapshot-id":7,"type":"branch"}},` +
		`"snapshots":[ {"snapshot-id":7,"sequence-number":1,"timestamp-ms":1700000000000,"x-extra":"kept",` +
		`"manifest-list":"file:///wh/t/metadata/snap-7.avro","summary":{"operation":"append"}} ]}`
	entry, err := NewEntry([]byte(doc))
	require.NoError(t, err)
	require.Len(t, entry.Spans, 1)
	next, err := applyJSON(t, entry.Meta, "file:///wh/t/metadata/0.json", []string{`{"action":"set-properties","updates":{"a":"b"}}`})
	require.NoError(t, err)
	enc, ok, err := Encode(next, 2, entry)
	require.NoError(t, err)
	require.True(t, ok)
	require.Contains(t, string(enc.Data), `"x-extra":"kept"`)
	require.Equal(t, enc.Data, enc.Refs, "every snapshot heads a ref: the refs document is the document")

	// The read-back check passes on the check document, and notices a
	// document that does not read back as what was built.
	readBack := func(doc string) error {
		back, _, err := Parse([]byte(doc))
		require.NoError(t, err)
		return SameEncoded(next, back, enc)
	}
	tampered := func(from, to string) string {
		out := strings.Replace(string(enc.Check), from, to, 1)
		require.NotEqual(t, string(enc.Check), out, "%s is in the check document", from)
		return out
	}
	require.NoError(t, readBack(string(enc.Check)))
	require.Error(t, readBack(tampered(`"properties":{`, `"properties":{"z":"1",`)))
	require.Error(t, readBack(tampered(`"operation":"append"`, `"operation":"overwrite"`)))
	require.Error(t, readBack(tampered(`"format-version"`, `"snapshot-log":[{"snapshot-id":7,"timestamp-ms":1700000000000}],"format-version"`)))
}

// TestEncodeCheckHoldsNewLogEntries: the check document carries only the
// metadata-log entry the commit adds (the document itself all of them),
// and the read-back check notices that entry reading back wrong or not at
// all, or an old one reappearing.
func TestEncodeCheckHoldsNewLogEntries(t *testing.T) {
	doc := `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"file:///wh/t",` +
		`"last-sequence-number":0,"last-updated-ms":1700000000000,"last-column-id":1,"current-schema-id":0,` +
		`"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}],` +
		`"default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,` +
		`"default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],` +
		`"metadata-log":[{"metadata-file":"file:///wh/t/metadata/old-1.json","timestamp-ms":1690000000000},` +
		`{"metadata-file":"file:///wh/t/metadata/old-2.json","timestamp-ms":1690000000001}]}`
	entry, err := NewEntry([]byte(doc))
	require.NoError(t, err)
	next, err := buildJSON(t, entry, "file:///wh/t/metadata/cur.json", []string{`{"action":"set-properties","updates":{"a":"b"}}`})
	require.NoError(t, err)
	enc, ok, err := Encode(next, 2, entry)
	require.NoError(t, err)
	require.True(t, ok)
	for _, f := range []string{"old-1.json", "old-2.json", "cur.json"} {
		require.Contains(t, string(enc.Data), f, "the document keeps the whole log")
	}
	require.NotContains(t, string(enc.Check), "old-1.json")
	require.NotContains(t, string(enc.Check), "old-2.json")
	require.Contains(t, string(enc.Check), "cur.json")

	readBack := func(doc string) error {
		back, _, err := Parse([]byte(doc))
		require.NoError(t, err)
		return SameEncoded(next, back, enc)
	}
	require.NoError(t, readBack(string(enc.Check)))
	tampered := func(from, to string) string {
		out := strings.Replace(string(enc.Check), from, to, 1)
		require.NotEqual(t, string(enc.Check), out, "%s is in the check document", from)
		return out
	}
	require.Error(t, readBack(tampered(`cur.json"`, `other.json"`)))
	require.Error(t, readBack(tampered(`"metadata-log":[`,
		`"metadata-log":[{"metadata-file":"file:///wh/t/metadata/old-2.json","timestamp-ms":1690000000001},`)))
	require.Error(t, readBack(tampered(`"metadata-log":`, `"x-metadata-log":`)))
}
