package v4export

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Table describes the exported table's first metadata file.
type Table struct {
	FormatVersion int
	UUID          string
	Location      string
	// TimestampMS is the snapshot's and the metadata's time.
	TimestampMS  int64
	SnapshotID   int64
	ManifestList string
	// Snapshot is Build's output for this snapshot; nil for a table
	// without one (the source had no snapshot), which NextRowID then gives.
	Snapshot  *Output
	NextRowID int64
	// SequenceNumber is Input.SequenceNumber.
	SequenceNumber int64
}

// keptKeys are the source metadata's fields the export carries as they
// are: the schemas, specs and sort orders keep their ids, which the
// manifests' files refer to.
var keptKeys = []string{"schemas", "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
	"sort-orders", "default-sort-order-id", "last-column-id"}

// droppedProperties are source table properties that must not follow the
// files: paths inside the source table (new writes would land there) and
// the v4 column-file settings.
var droppedProperties = []string{"write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path"}

// Metadata builds the exported table's metadata document from the source
// (v4) table's: its schemas, partition specs, sort orders and properties
// (less droppedProperties and write.column-files.*), with one snapshot (none
// when t.Snapshot is nil) and no history. An error means src is not a metadata document with those
// fields.
func Metadata(src []byte, t Table) ([]byte, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(src, &in); err != nil {
		return nil, fmt.Errorf("source metadata: %w", err)
	}
	out := map[string]any{}
	for _, k := range keptKeys {
		v, ok := in[k]
		if !ok {
			return nil, fmt.Errorf("source metadata has no %q", k)
		}
		out[k] = v
	}
	props, err := properties(in["properties"])
	if err != nil {
		return nil, err
	}
	out["format-version"] = t.FormatVersion
	out["table-uuid"] = t.UUID
	out["location"] = t.Location
	out["last-updated-ms"] = t.TimestampMS
	out["properties"] = props
	out["metadata-log"] = []any{}
	out["snapshots"] = []any{}
	out["snapshot-log"] = []any{}
	out["refs"] = map[string]any{}
	if t.FormatVersion >= 2 {
		out["last-sequence-number"] = t.SequenceNumber
	}
	if t.FormatVersion >= 3 {
		out["next-row-id"] = t.NextRowID
	}
	if t.Snapshot != nil {
		snap := map[string]any{
			"snapshot-id": t.SnapshotID, "timestamp-ms": t.TimestampMS, "manifest-list": t.ManifestList,
			"summary": t.Snapshot.Summary, "schema-id": out["current-schema-id"],
		}
		out["current-snapshot-id"] = t.SnapshotID
		out["snapshots"] = []any{snap}
		out["snapshot-log"] = []any{map[string]any{"snapshot-id": t.SnapshotID, "timestamp-ms": t.TimestampMS}}
		out["refs"] = map[string]any{"main": map[string]any{"snapshot-id": t.SnapshotID, "type": "branch"}}
		if t.FormatVersion >= 2 {
			snap["sequence-number"] = t.SequenceNumber
		}
		if t.FormatVersion >= 3 {
			out["next-row-id"] = t.Snapshot.NextRowID
			snap["first-row-id"] = 0
			snap["added-rows"] = t.Snapshot.AddedRows
		}
	}
	if t.FormatVersion == 1 {
		if err := v1Fields(in, out); err != nil {
			return nil, err
		}
	}
	return json.Marshal(out)
}

// properties filters the source table's properties.
func properties(raw json.RawMessage) (map[string]string, error) {
	props := map[string]string{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &props); err != nil {
			return nil, fmt.Errorf("source metadata properties: %w", err)
		}
	}
	for _, k := range droppedProperties {
		delete(props, k)
	}
	for k := range props {
		if strings.HasPrefix(k, "write.column-files.") {
			delete(props, k)
		}
	}
	return props, nil
}

// v1Fields adds the fields format 1 requires: the current schema as
// "schema" and the default spec's fields as "partition-spec".
func v1Fields(in map[string]json.RawMessage, out map[string]any) error {
	var schemas []map[string]json.RawMessage
	var specs []struct {
		SpecID int             `json:"spec-id"`
		Fields json.RawMessage `json:"fields"`
	}
	var cur, def int
	if err := json.Unmarshal(in["schemas"], &schemas); err != nil {
		return fmt.Errorf("source metadata schemas: %w", err)
	}
	if err := json.Unmarshal(in["partition-specs"], &specs); err != nil {
		return fmt.Errorf("source metadata partition-specs: %w", err)
	}
	if err := json.Unmarshal(in["current-schema-id"], &cur); err != nil {
		return fmt.Errorf("source metadata current-schema-id: %w", err)
	}
	if err := json.Unmarshal(in["default-spec-id"], &def); err != nil {
		return fmt.Errorf("source metadata default-spec-id: %w", err)
	}
	for _, s := range schemas {
		var id int
		if err := json.Unmarshal(s["schema-id"], &id); err == nil && id == cur {
			out["schema"] = s
		}
	}
	for _, s := range specs {
		if s.SpecID == def {
			out["partition-spec"] = s.Fields
		}
	}
	if out["schema"] == nil || out["partition-spec"] == nil {
		return fmt.Errorf("source metadata lacks its current schema or default spec")
	}
	return nil
}
