package changeevents

import (
	"encoding/json"

	"github.com/apache/iceberg-go/table"
)

// A change the catalog makes itself (a create, a v4 snapshot commit) has no
// client updates to record; these describe it as the updates a client
// would have sent, which the events proposal's operations carry.

// CreateTableUpdates describes a table created from a create request as the
// updates of a create transaction: the UUID, format version, schema,
// spec, sort order, location and properties it got.
func CreateTableUpdates(meta table.Metadata, version int) json.RawMessage {
	ups := table.Updates{table.NewAssignUUIDUpdate(meta.TableUUID()), table.NewUpgradeFormatVersionUpdate(version)}
	if sc := meta.CurrentSchema(); sc != nil {
		ups = append(ups, table.NewAddSchemaUpdate(sc), table.NewSetCurrentSchemaUpdate(-1))
	}
	spec := meta.PartitionSpec()
	ups = append(ups, table.NewAddPartitionSpecUpdate(&spec, true), table.NewSetDefaultSpecUpdate(-1))
	order := meta.SortOrder()
	ups = append(ups, table.NewAddSortOrderUpdate(&order), table.NewSetDefaultSortOrderUpdate(-1),
		table.NewSetLocationUpdate(meta.Location()), table.NewSetPropertiesUpdate(meta.Properties()))
	raw, err := json.Marshal(ups)
	if err != nil {
		return json.RawMessage("[]")
	}
	return raw
}

// CreateViewUpdates describes a created view as the updates that build it
// (the REST events proposal's create-view needs them): its UUID, format
// version, location, properties, schemas and version.
func CreateViewUpdates(doc []byte) json.RawMessage {
	var m struct {
		UUID     string            `json:"view-uuid"`
		Format   int               `json:"format-version"`
		Location string            `json:"location"`
		Props    map[string]string `json:"properties"`
		Schemas  []json.RawMessage `json:"schemas"`
		Versions []json.RawMessage `json:"versions"`
	}
	if json.Unmarshal(doc, &m) != nil {
		return json.RawMessage("[]")
	}
	ups := []any{
		map[string]any{"action": "assign-uuid", "uuid": m.UUID},
		map[string]any{"action": "upgrade-format-version", "format-version": m.Format},
		map[string]any{"action": "set-location", "location": m.Location},
		map[string]any{"action": "set-properties", "updates": m.Props},
	}
	for _, sc := range m.Schemas {
		ups = append(ups, map[string]any{"action": "add-schema", "schema": sc})
	}
	for _, v := range m.Versions {
		ups = append(ups, map[string]any{"action": "add-view-version", "view-version": v})
	}
	ups = append(ups, map[string]any{"action": "set-current-view-version", "view-version-id": -1})
	raw, err := json.Marshal(ups)
	if err != nil {
		return json.RawMessage("[]")
	}
	return raw
}

// SnapshotUpdates describes a snapshot commit the catalog built itself (a
// v4 files, column-files or compaction commit) as the updates a client
// would have sent: add-snapshot of the new head of main, set-snapshot-ref.
func SnapshotUpdates(meta table.Metadata) json.RawMessage {
	snap := meta.CurrentSnapshot()
	if snap == nil {
		return json.RawMessage("[]")
	}
	raw, err := json.Marshal([]any{
		map[string]any{"action": "add-snapshot", "snapshot": snap},
		map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snap.SnapshotID},
	})
	if err != nil {
		return json.RawMessage("[]")
	}
	return raw
}

// MetadataUUID reads table-uuid, view-uuid or function-uuid from a
// metadata document ("" when it has none).
func MetadataUUID(doc []byte) string {
	var head struct {
		Table    string `json:"table-uuid"`
		View     string `json:"view-uuid"`
		Function string `json:"function-uuid"`
	}
	_ = json.Unmarshal(doc, &head) // an object without one still has events
	switch {
	case head.Table != "":
		return head.Table
	case head.View != "":
		return head.View
	}
	return head.Function
}
