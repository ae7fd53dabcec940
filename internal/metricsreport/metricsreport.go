// Package metricsreport checks the metrics report an engine posts after a
// scan or a commit (the REST spec's ReportMetricsRequest: a ScanReport or
// a CommitReport with its report-type) and turns it into the document the
// catalog stores: only the spec's fields, their shapes checked exactly,
// metadata entries that could carry a credential dropped, compact JSON of
// at most MaxStored bytes. The scan filter is kept as sent: it is the
// query's shape (column names, transforms and literals), which is what a
// reader of scan reports wants to see. It is pure: bytes in, a report or
// an error out.
package metricsreport

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/lakehold/catalog/internal/fault"
)

// The two report types of the spec.
const (
	TypeScan   = "scan-report"
	TypeCommit = "commit-report"
)

// MaxStored bounds the stored document of one report, in bytes. A report
// whose document (after dropping unknown fields and credential-like
// metadata) is larger is refused with 413: reports are advisory, and a
// bounded row keeps the table's report history cheap to read.
const MaxStored = 64 << 10

// Report is a checked report, ready to store.
type Report struct {
	// Type is TypeScan or TypeCommit.
	Type string
	// TableName is the table's name as the engine wrote it.
	TableName string
	// SnapshotID is the snapshot scanned or committed.
	SnapshotID int64
	// Doc is the stored document: the ScanReport or CommitReport object
	// without its report-type, compact JSON.
	Doc json.RawMessage
	// Dropped counts the metadata entries left out as credential-like.
	Dropped int
}

// Check decodes and checks body, a ReportMetricsRequest. Errors: 400
// BadRequest naming the field for a body that is not a JSON object, a
// report-type other than the two, a required field missing or null, or a
// field of the wrong shape (64-bit integers must be exact JSON integers);
// 413 TooLarge when the stored document would exceed MaxStored.
func Check(body []byte) (*Report, error) {
	obj, err := object(body, "the report")
	if err != nil {
		return nil, err
	}
	var typ string
	if err := need(obj, "report-type", &typ, "a string"); err != nil {
		return nil, err
	}
	var doc any
	var rep *Report
	switch typ {
	case TypeScan:
		d, err := scan(obj)
		if err != nil {
			return nil, err
		}
		rep, doc = &Report{Type: typ, TableName: d.TableName, SnapshotID: d.SnapshotID, Dropped: d.dropped}, d
	case TypeCommit:
		d, err := commit(obj)
		if err != nil {
			return nil, err
		}
		rep, doc = &Report{Type: typ, TableName: d.TableName, SnapshotID: d.SnapshotID, Dropped: d.dropped}, d
	default:
		return nil, fault.New(fault.BadRequest, "Invalid report-type: expected scan-report or commit-report")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "Cannot encode the metrics report")
	}
	if len(out) > MaxStored {
		return nil, fault.New(fault.TooLarge, "Invalid %s: %d bytes once checked; at most %d bytes are stored per report", typ, len(out), MaxStored)
	}
	rep.Doc = out
	return rep, nil
}

// object decodes b as one JSON object: 400 naming what for anything else
// (trailing data included).
func object(b []byte, what string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
		return nil, fault.New(fault.BadRequest, "Invalid metrics report: %s must be a JSON object", what)
	}
	return m, nil
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// need decodes the required field name of obj into dst: 400 naming the
// field when it is missing, null or not shaped as kind says.
func need(obj map[string]json.RawMessage, name string, dst any, kind string) error {
	return needAs(obj, name, name, dst, kind)
}

// needAs is need naming the field label in its errors (a metric's field
// under its metric's name).
func needAs(obj map[string]json.RawMessage, name, label string, dst any, kind string) error {
	raw := obj[name]
	if isNull(raw) {
		return fault.New(fault.BadRequest, "Invalid metrics report: missing field %s", label)
	}
	return decode(raw, label, dst, kind)
}

// clip shortens a client's name for an error message.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "..."
}

// decode decodes raw into dst: 400 naming the field when the JSON is not
// of dst's type (json refuses fractions and out-of-range numbers for Go
// integers, which keeps 64-bit ids exact).
func decode(raw json.RawMessage, name string, dst any, kind string) error {
	if err := json.Unmarshal(raw, dst); err != nil {
		return fault.New(fault.BadRequest, "Invalid metrics report: field %s must be %s", name, kind)
	}
	return nil
}

// nullsIn reports whether raw, a JSON array, holds a null: json leaves
// the zero value for it, which would store a field id or name nobody sent.
func nullsIn(raw json.RawMessage) bool {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return false
	}
	for _, it := range items {
		if isNull(it) {
			return true
		}
	}
	return false
}

// credentialWords mark a metadata key whose value may be a credential;
// such entries are never stored.
var credentialWords = []string{"token", "secret", "passw", "pwd", "key", "credential", "auth", "signature",
	"cookie", "session", "bearer", "private", "cert", "sas"}

// credentialKey reports whether a metadata key looks like it names a
// credential.
func credentialKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range credentialWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// credentialValue reports whether a value looks like a credential
// whatever its key: an Authorization header value or a JSON web token.
func credentialValue(v string) bool {
	l := strings.ToLower(strings.TrimSpace(v))
	if strings.HasPrefix(l, "bearer ") || strings.HasPrefix(l, "basic ") {
		return true
	}
	return strings.HasPrefix(v, "eyJ") && strings.Count(v, ".") == 2
}
