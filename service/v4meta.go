package service

import (
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go/table"
	"github.com/lakehold/catalog/internal/fault"
)

// FormatV4 is the table format version whose snapshots point at v4 root
// manifests and whose data can carry column files.
const FormatV4 = 4

// iceberg-go models table metadata up to format version 3. A v4 table is
// handled through a v3 view of its JSON: the version number is lowered and
// each snapshot's `root-manifest` travels in `manifest-list`; the reverse
// mapping restores both when the metadata is written. Everything else in
// the v4 JSON (next-row-id, schemas, specs, refs) has the v3 shape.

// parseTableMetadata parses stored metadata JSON of format 1–4 and returns
// it with its real format version.
func parseTableMetadata(data []byte) (table.Metadata, int, error) {
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

// marshalTableMetadata writes metadata as format version `version`.
func marshalTableMetadata(m table.Metadata, version int) ([]byte, error) {
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

// updateInfo is what the service reads of one update of a commit from its
// JSON (iceberg-go's update types are unexported): the action, the format
// version of an upgrade, and the ref and snapshot ids it names.
type updateInfo struct {
	Action        string `json:"action"`
	FormatVersion int    `json:"format-version"`
	RefName       string `json:"ref-name"`
	SnapshotID    *int64 `json:"snapshot-id"`
	Snapshot      *struct {
		SnapshotID int64 `json:"snapshot-id"`
	} `json:"snapshot"`
}

// rawUpdates reads the updateInfo of each update of a commit; nil when raw
// is not a list of objects.
func rawUpdates(raw json.RawMessage) []updateInfo {
	var ups []updateInfo
	if err := json.Unmarshal(raw, &ups); err != nil {
		return nil
	}
	return ups
}

// v4Plan inspects a commit's updates against the current format version:
// it returns the target version and the updates to apply through the v3
// view (an upgrade to 4 is done by the view itself). A downgrade and
// snapshot-producing updates on v4 tables are 400s; so is an upgrade of a
// table with snapshots (hasSnapshots) to v4, which converts manifests and
// is committed on its own through commitV4Upgrade, never here.
func v4Plan(current int, hasSnapshots bool, ups table.Updates, meta []updateInfo) (int, table.Updates, error) {
	target := current
	if len(meta) != len(ups) {
		return current, ups, nil
	}
	kept := make(table.Updates, 0, len(ups))
	for i, u := range ups {
		m := meta[i]
		switch {
		case m.Action == "upgrade-format-version" && m.FormatVersion == FormatV4:
			if current != FormatV4 && hasSnapshots {
				return 0, nil, fault.New(fault.BadRequest, "Cannot upgrade a table with snapshots to format version 4 inside a multi-table transaction: the upgrade converts the table's manifests and must be committed on its own")
			}
			target = FormatV4
			continue
		case m.Action == "upgrade-format-version" && current == FormatV4 && m.FormatVersion < FormatV4:
			return 0, nil, fault.New(fault.BadRequest, "Cannot downgrade format version from 4 to %d", m.FormatVersion)
		case m.Action == "upgrade-format-version" && m.FormatVersion > FormatV4:
			return 0, nil, fault.New(fault.BadRequest, "Unsupported format version: %d", m.FormatVersion)
		case target == FormatV4 && m.Action == "add-snapshot":
			return 0, nil, fault.New(fault.BadRequest, "Snapshots of format version 4 tables are committed through the files and column-files routes, not add-snapshot")
		}
		kept = append(kept, u)
	}
	return target, kept, nil
}
