package metricsreport

import (
	"encoding/json"
	"sort"

	"github.com/lakehold/catalog/internal/fault"
)

// ScanDoc is the stored form of a ScanReport.
type ScanDoc struct {
	TableName           string            `json:"table-name"`
	SnapshotID          int64             `json:"snapshot-id"`
	Filter              json.RawMessage   `json:"filter"`
	SchemaID            int32             `json:"schema-id"`
	ProjectedFieldIDs   []int32           `json:"projected-field-ids"`
	ProjectedFieldNames []string          `json:"projected-field-names"`
	Metrics             map[string]any    `json:"metrics"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	dropped             int
}

// CommitDoc is the stored form of a CommitReport.
type CommitDoc struct {
	TableName      string            `json:"table-name"`
	SnapshotID     int64             `json:"snapshot-id"`
	SequenceNumber int64             `json:"sequence-number"`
	Operation      string            `json:"operation"`
	Metrics        map[string]any    `json:"metrics"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	dropped        int
}

// Counter is a CounterResult.
type Counter struct {
	Unit  string `json:"unit"`
	Value int64  `json:"value"`
}

// Timer is a TimerResult.
type Timer struct {
	TimeUnit      string `json:"time-unit"`
	Count         int64  `json:"count"`
	TotalDuration int64  `json:"total-duration"`
}

// scan checks a ScanReport's fields.
func scan(obj map[string]json.RawMessage) (*ScanDoc, error) {
	d := &ScanDoc{}
	for _, f := range []struct {
		name, kind string
		dst        any
	}{
		{"table-name", "a string", &d.TableName},
		{"snapshot-id", "a 64-bit integer", &d.SnapshotID},
		{"schema-id", "a 32-bit integer", &d.SchemaID},
		{"projected-field-ids", "an array of 32-bit integers", &d.ProjectedFieldIDs},
		{"projected-field-names", "an array of strings", &d.ProjectedFieldNames},
	} {
		if err := need(obj, f.name, f.dst, f.kind); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{"projected-field-ids", "projected-field-names"} {
		if nullsIn(obj[name]) {
			return nil, fault.New(fault.BadRequest, "Invalid metrics report: field %s must not hold null", name)
		}
	}
	filter, err := filterOf(obj)
	if err != nil {
		return nil, err
	}
	d.Filter = filter
	if d.Metrics, err = metrics(obj); err != nil {
		return nil, err
	}
	if d.Metadata, d.dropped, err = metadata(obj); err != nil {
		return nil, err
	}
	return d, nil
}

// commit checks a CommitReport's fields.
func commit(obj map[string]json.RawMessage) (*CommitDoc, error) {
	d := &CommitDoc{}
	for _, f := range []struct {
		name, kind string
		dst        any
	}{
		{"table-name", "a string", &d.TableName},
		{"snapshot-id", "a 64-bit integer", &d.SnapshotID},
		{"sequence-number", "a 64-bit integer", &d.SequenceNumber},
		{"operation", "a string", &d.Operation},
	} {
		if err := need(obj, f.name, f.dst, f.kind); err != nil {
			return nil, err
		}
	}
	var err error
	if d.Metrics, err = metrics(obj); err != nil {
		return nil, err
	}
	if d.Metadata, d.dropped, err = metadata(obj); err != nil {
		return nil, err
	}
	return d, nil
}

// filterOf checks the scan's filter expression by its shape only (a
// boolean for always-true or always-false, or an expression object) and
// returns it compacted; its terms and literals are kept as sent.
func filterOf(obj map[string]json.RawMessage) (json.RawMessage, error) {
	raw := obj["filter"]
	if isNull(raw) {
		return nil, fault.New(fault.BadRequest, "Invalid metrics report: missing field filter")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fault.New(fault.BadRequest, "Invalid metrics report: field filter must be a boolean or an expression object")
	}
	switch v.(type) {
	case bool, map[string]any:
	default:
		return nil, fault.New(fault.BadRequest, "Invalid metrics report: field filter must be a boolean or an expression object")
	}
	var buf json.RawMessage
	buf, _ = json.Marshal(json.RawMessage(raw)) // compacts; raw is valid JSON
	return buf, nil
}

// metrics checks the metrics map: every value is a CounterResult (unit,
// value) or a TimerResult (time-unit, count, total-duration). A value
// with both shapes' fields is refused: it is neither.
func metrics(obj map[string]json.RawMessage) (map[string]any, error) {
	raw := obj["metrics"]
	if isNull(raw) {
		return nil, fault.New(fault.BadRequest, "Invalid metrics report: missing field metrics")
	}
	var m map[string]json.RawMessage
	if err := decode(raw, "metrics", &m, "an object of counters and timers"); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(m))
	for _, name := range sortedKeys(m) {
		v, err := metric(m[name], "metrics."+clip(name))
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// metric checks one metric value named field.
func metric(raw json.RawMessage, field string) (any, error) {
	var o map[string]json.RawMessage
	if isNull(raw) || json.Unmarshal(raw, &o) != nil || o == nil {
		return nil, fault.New(fault.BadRequest, "Invalid metrics report: field %s must be a counter or a timer object", field)
	}
	_, isTimer := o["time-unit"]
	_, isCounter := o["unit"]
	switch {
	case isTimer && !isCounter:
		t := &Timer{}
		for _, f := range []struct {
			name, kind string
			dst        any
		}{{"time-unit", "a string", &t.TimeUnit}, {"count", "a 64-bit integer", &t.Count}, {"total-duration", "a 64-bit integer", &t.TotalDuration}} {
			if err := needAs(o, f.name, field+"."+f.name, f.dst, f.kind); err != nil {
				return nil, err
			}
		}
		return t, nil
	case isCounter && !isTimer:
		c := &Counter{}
		for _, f := range []struct {
			name, kind string
			dst        any
		}{{"unit", "a string", &c.Unit}, {"value", "a 64-bit integer", &c.Value}} {
			if err := needAs(o, f.name, field+"."+f.name, f.dst, f.kind); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	return nil, fault.New(fault.BadRequest, "Invalid metrics report: field %s must be a counter (unit, value) or a timer (time-unit, count, total-duration)", field)
}

// metadata checks the optional metadata map of strings and drops the
// entries whose key or value looks like a credential; it returns how
// many it dropped.
func metadata(obj map[string]json.RawMessage) (map[string]string, int, error) {
	raw := obj["metadata"]
	if isNull(raw) {
		return nil, 0, nil
	}
	var m map[string]*string
	if err := decode(raw, "metadata", &m, "an object of strings"); err != nil {
		return nil, 0, err
	}
	out := make(map[string]string, len(m))
	dropped := 0
	for k, v := range m {
		if v == nil {
			return nil, 0, fault.New(fault.BadRequest, "Invalid metrics report: field metadata.%s must be a string", clip(k))
		}
		if credentialKey(k) || credentialValue(*v) {
			dropped++
			continue
		}
		out[k] = *v
	}
	if len(out) == 0 {
		out = nil
	}
	return out, dropped, nil
}

// sortedKeys returns m's keys in order, so that the first bad metric
// named is always the same one.
func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
