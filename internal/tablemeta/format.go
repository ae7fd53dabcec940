package tablemeta

import (
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// FormatV4 is the table format version whose snapshots point at v4 root
// manifests and whose data can carry column files.
const FormatV4 = 4

// iceberg-go models table metadata up to format version 3. A v4 table is
// handled through a v3 view of its JSON: the version number is lowered and
// each snapshot's `root-manifest` travels in `manifest-list`; the reverse
// mapping restores both when the metadata is written. Everything else in
// the v4 JSON (next-row-id, schemas, specs, refs) has the v3 shape.

// Parse parses stored metadata JSON of format 1–4 and returns
// it with its real format version. It returns an error when data is not
// JSON, has no usable format-version, or does not parse as that format.
func Parse(data []byte) (table.Metadata, int, error) {
	// Formats 1 to 3 (every commit's read-back check) need one decoding:
	// iceberg-go reads the version itself. Anything it refuses, v4
	// included, takes the full path, which also words the errors.
	if m, err := table.ParseMetadataBytes(data); err == nil {
		return m, m.Version(), nil
	}
	return parseAny(data)
}

// parseAny is Parse through a decoding of the top-level object, which
// v4 needs to be rewritten as its v3 view.
func parseAny(data []byte) (table.Metadata, int, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, 0, err
	}
	var version int
	if err := json.Unmarshal(doc["format-version"], &version); err != nil {
		return nil, 0, fmt.Errorf("format-version: %w", err)
	}
	if version != FormatV4 {
		m, err := table.ParseMetadataBytes(data)
		return m, version, err
	}
	doc["format-version"] = json.RawMessage("3")
	if raw, ok := doc["snapshots"]; ok {
		var snaps []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &snaps); err != nil {
			return nil, 0, fmt.Errorf("snapshots: %w", err)
		}
		for _, s := range snaps {
			if rm, ok := s["root-manifest"]; ok {
				s["manifest-list"] = rm
				delete(s, "root-manifest")
			}
		}
		doc["snapshots"], _ = json.Marshal(snaps)
	}
	v3, err := json.Marshal(doc)
	if err != nil {
		return nil, 0, err
	}
	m, err := table.ParseMetadataBytes(v3)
	return m, version, err
}

// Marshal writes metadata as format version `version`.
func Marshal(m table.Metadata, version int) ([]byte, error) {
	data, err := json.Marshal(m)
	if err != nil || version != FormatV4 {
		return data, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	doc["format-version"] = json.RawMessage("4")
	if raw, ok := doc["snapshots"]; ok {
		var snaps []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &snaps); err != nil {
			return nil, err
		}
		for _, s := range snaps {
			if ml, ok := s["manifest-list"]; ok {
				s["root-manifest"] = ml
				delete(s, "manifest-list")
			}
		}
		doc["snapshots"], _ = json.Marshal(snaps)
	}
	if _, ok := doc["next-row-id"]; !ok {
		doc["next-row-id"] = json.RawMessage("0")
	}
	return json.Marshal(doc)
}

// UpdateInfo is what the service reads of one update of a commit from its
// JSON (iceberg-go's update types are unexported): the action, the format
// version of an upgrade, and the ref and snapshot ids it names.
type UpdateInfo struct {
	Action        string `json:"action"`
	FormatVersion int    `json:"format-version"`
	RefName       string `json:"ref-name"`
	SnapshotID    *int64 `json:"snapshot-id"`
	Snapshot      *struct {
		SnapshotID int64 `json:"snapshot-id"`
	} `json:"snapshot"`
}

// ReadUpdates reads the UpdateInfo of each update of a commit; nil when raw
// is not a list of objects.
func ReadUpdates(raw json.RawMessage) []UpdateInfo {
	var ups []UpdateInfo
	if err := json.Unmarshal(raw, &ups); err != nil {
		return nil
	}
	return ups
}
