package metricsreport

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return b
}

// TestCheckJavaShapes: reports shaped as Iceberg Java's parsers write
// them are taken, 64-bit ids exact, metrics typed, and credential-like
// metadata left out.
func TestCheckJavaShapes(t *testing.T) {
	rep, err := Check(fixture(t, "scan-report.json"))
	require.NoError(t, err)
	require.Equal(t, TypeScan, rep.Type)
	require.Equal(t, int64(7523141588432391877), rep.SnapshotID)
	require.Equal(t, "lakehold.sales.orders", rep.TableName)
	var scan map[string]any
	require.NoError(t, json.Unmarshal(rep.Doc, &scan))
	require.NotContains(t, scan, "report-type")
	require.Contains(t, string(rep.Doc), `"snapshot-id":7523141588432391877`)
	require.Contains(t, string(rep.Doc), `"filter":{"type":"and"`)
	require.Contains(t, string(rep.Doc), `"total-planning-duration":{"time-unit":"nanoseconds","count":1,"total-duration":41852333}`)
	require.Contains(t, string(rep.Doc), `"skipped-data-files":{"unit":"count","value":5}`)
	require.Equal(t, 0, rep.Dropped)

	rep, err = Check(fixture(t, "commit-report.json"))
	require.NoError(t, err)
	require.Equal(t, TypeCommit, rep.Type)
	require.Equal(t, 3, rep.Dropped)
	var commit CommitDoc
	require.NoError(t, json.Unmarshal(rep.Doc, &commit))
	require.Equal(t, int64(12), commit.SequenceNumber)
	require.Equal(t, "append", commit.Operation)
	require.Equal(t, map[string]string{"engine-name": "spark", "engine-version": "3.5.4",
		"iceberg-version": "Apache Iceberg 1.9.1 (commit 3d2ed5d8)"}, commit.Metadata)
	for _, secret := range []string{"AKIAEXAMPLESECRET", "FQoGZXIvYXdzEXAMPLE", "eyJhbGci"} {
		require.NotContains(t, string(rep.Doc), secret)
	}
}

const minimalScan = `{"report-type":"scan-report","table-name":"t","snapshot-id":1,"filter":true,"schema-id":0,
	"projected-field-ids":[],"projected-field-names":[],"metrics":{}}`

const minimalCommit = `{"report-type":"commit-report","table-name":"t","snapshot-id":1,"sequence-number":1,
	"operation":"append","metrics":{}}`

// with returns base with field set to value (raw JSON), or removed when
// value is "".
func with(t *testing.T, base, field, value string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(base), &m))
	if value == "" {
		delete(m, field)
	} else {
		m[field] = json.RawMessage(value)
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// TestCheckRefusesShapes: each malformed field is refused with 400
// naming it.
func TestCheckRefusesShapes(t *testing.T) {
	for _, tc := range []struct {
		name, base, field, value, want string
	}{
		{"no type", minimalScan, "report-type", "", "missing field report-type"},
		{"unknown type", minimalScan, "report-type", `"plan-report"`, "Invalid report-type"},
		{"type not a string", minimalScan, "report-type", `1`, "field report-type must be a string"},
		{"no table-name", minimalScan, "table-name", "", "missing field table-name"},
		{"null snapshot", minimalScan, "snapshot-id", "null", "missing field snapshot-id"},
		{"fractional snapshot", minimalScan, "snapshot-id", "1.5", "field snapshot-id must be a 64-bit integer"},
		{"snapshot past int64", minimalScan, "snapshot-id", "9223372036854775808", "field snapshot-id must be a 64-bit integer"},
		{"snapshot as string", minimalScan, "snapshot-id", `"1"`, "field snapshot-id must be a 64-bit integer"},
		{"schema-id past int32", minimalScan, "schema-id", "2147483648", "field schema-id must be a 32-bit integer"},
		{"no filter", minimalScan, "filter", "", "missing field filter"},
		{"filter a string", minimalScan, "filter", `"id = 1"`, "field filter must be a boolean or an expression object"},
		{"field ids not ints", minimalScan, "projected-field-ids", `["a"]`, "field projected-field-ids must be an array of 32-bit integers"},
		{"field ids with null", minimalScan, "projected-field-ids", `[1,null]`, "field projected-field-ids must not hold null"},
		{"names with null", minimalScan, "projected-field-names", `["a",null]`, "field projected-field-names must not hold null"},
		{"no metrics", minimalScan, "metrics", "", "missing field metrics"},
		{"metrics a list", minimalScan, "metrics", `[]`, "field metrics must be an object"},
		{"metric a number", minimalScan, "metrics", `{"m":1}`, "field metrics.m must be a counter or a timer object"},
		{"metric neither", minimalScan, "metrics", `{"m":{"x":1}}`, "field metrics.m must be a counter (unit, value) or a timer"},
		{"metric both", minimalScan, "metrics", `{"m":{"unit":"count","value":1,"time-unit":"ns","count":1,"total-duration":1}}`, "field metrics.m must be a counter (unit, value)"},
		{"counter without value", minimalScan, "metrics", `{"m":{"unit":"count"}}`, "missing field metrics.m.value"},
		{"counter value float", minimalScan, "metrics", `{"m":{"unit":"count","value":0.5}}`, "field metrics.m.value must be a 64-bit integer"},
		{"timer without count", minimalScan, "metrics", `{"m":{"time-unit":"nanoseconds","total-duration":3}}`, "missing field metrics.m.count"},
		{"timer unit number", minimalScan, "metrics", `{"m":{"time-unit":9,"count":1,"total-duration":3}}`, "field metrics.m.time-unit must be a string"},
		{"metadata a list", minimalScan, "metadata", `["a"]`, "field metadata must be an object of strings"},
		{"metadata number", minimalScan, "metadata", `{"a":1}`, "field metadata must be an object of strings"},
		{"metadata null value", minimalScan, "metadata", `{"a":null}`, "field metadata.a must be a string"},
		{"no sequence-number", minimalCommit, "sequence-number", "", "missing field sequence-number"},
		{"operation a number", minimalCommit, "operation", `3`, "field operation must be a string"},
		{"commit metrics missing", minimalCommit, "metrics", "", "missing field metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(with(t, tc.base, tc.field, tc.value))
			require.Error(t, err)
			require.Equal(t, fault.BadRequest, fault.KindOf(err))
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestCheckNotAnObject: bodies that are not one JSON object.
func TestCheckNotAnObject(t *testing.T) {
	for _, body := range []string{``, `null`, `[]`, `"scan-report"`, `{"report-type":"scan-report"`, minimalScan + ` {}`} {
		_, err := Check([]byte(body))
		require.Equal(t, fault.BadRequest, fault.KindOf(err), body)
	}
}

// TestCheckKeepsOnlySpecFields: unknown fields are not stored, optional
// metadata may be absent or null, and an empty one is left out.
func TestCheckKeepsOnlySpecFields(t *testing.T) {
	body := with(t, minimalCommit, "x-request-headers", `{"Authorization":"Bearer abc"}`)
	rep, err := Check(body)
	require.NoError(t, err)
	require.JSONEq(t, `{"table-name":"t","snapshot-id":1,"sequence-number":1,"operation":"append","metrics":{}}`, string(rep.Doc))
	rep, err = Check(with(t, minimalScan, "metadata", `null`))
	require.NoError(t, err)
	require.JSONEq(t, `{"table-name":"t","snapshot-id":1,"filter":true,"schema-id":0,"projected-field-ids":[],
		"projected-field-names":[],"metrics":{}}`, string(rep.Doc))
	rep, err = Check(with(t, minimalScan, "metadata", `{"auth-token":"x"}`))
	require.NoError(t, err)
	require.NotContains(t, string(rep.Doc), "metadata")
	require.Equal(t, 1, rep.Dropped)
}

// TestCheckDropsCredentialMetadata: keys naming a credential and values
// shaped like one are dropped; ordinary entries stay.
func TestCheckDropsCredentialMetadata(t *testing.T) {
	meta := map[string]string{
		"engine-name": "trino", "app-name": "nightly",
		"token": "t", "client-secret": "s", "PASSWORD": "p", "s3.access-key-id": "k", "oauth2-credential": "c",
		"Authorization": "a", "x-amz-signature": "sig", "cookie": "c", "aws.session": "s", "azure.sas": "sv=1",
		"innocent": "Bearer abc.def", "also-innocent": "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.sig",
	}
	raw, err := json.Marshal(meta)
	require.NoError(t, err)
	rep, err := Check(with(t, minimalScan, "metadata", string(raw)))
	require.NoError(t, err)
	var d ScanDoc
	require.NoError(t, json.Unmarshal(rep.Doc, &d))
	require.Equal(t, map[string]string{"engine-name": "trino", "app-name": "nightly"}, d.Metadata)
	require.Equal(t, len(meta)-2, rep.Dropped)
}

// TestCheckSizeBound: a report over MaxStored once checked is 413; one
// whose bulk is an unknown field (not stored) is taken.
func TestCheckSizeBound(t *testing.T) {
	big := `"` + strings.Repeat("x", MaxStored) + `"`
	_, err := Check(with(t, minimalScan, "table-name", big))
	require.Equal(t, fault.TooLarge, fault.KindOf(err))
	require.Contains(t, err.Error(), "at most 65536 bytes are stored per report")
	rep, err := Check(with(t, minimalScan, "x-ignored", big))
	require.NoError(t, err)
	require.Less(t, len(rep.Doc), 1024)
}

// FuzzCheck: Check never panics; what it takes is a stored document
// within the bound, with no credential-like metadata, that Check takes
// again unchanged.
func FuzzCheck(f *testing.F) {
	f.Add(fixture(f, "scan-report.json"))
	f.Add(fixture(f, "commit-report.json"))
	f.Add([]byte(minimalScan))
	f.Add([]byte(minimalCommit))
	f.Add([]byte(`{"report-type":"scan-report","metrics":{"a":{"unit":"x","value":-1}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rep, err := Check(body)
		if err != nil {
			k := fault.KindOf(err)
			if k != fault.BadRequest && k != fault.TooLarge {
				t.Fatalf("unexpected error kind %v: %v", k, err)
			}
			return
		}
		if len(rep.Doc) > MaxStored || !json.Valid(rep.Doc) {
			t.Fatalf("bad stored document (%d bytes)", len(rep.Doc))
		}
		var doc struct {
			Metadata map[string]string `json:"metadata"`
		}
		if err := json.Unmarshal(rep.Doc, &doc); err != nil {
			t.Fatal(err)
		}
		for k, v := range doc.Metadata {
			if credentialKey(k) || credentialValue(v) {
				t.Fatalf("credential-like metadata %q stored", k)
			}
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(rep.Doc, &m); err != nil {
			t.Fatal(err)
		}
		m["report-type"], _ = json.Marshal(rep.Type)
		again, _ := json.Marshal(m)
		rep2, err := Check(again)
		if err != nil {
			t.Fatalf("stored document refused on a second check: %v", err)
		}
		if string(rep2.Doc) != string(rep.Doc) || rep2.SnapshotID != rep.SnapshotID {
			t.Fatalf("second check changed the document:\n%s\n%s", rep.Doc, rep2.Doc)
		}
	})
}
