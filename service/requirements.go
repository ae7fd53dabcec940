package service

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
)

// requirement is one TableRequirement of a commit. We decode and check
// them ourselves so that failures carry the exact texts Java clients and
// the compatibility kit expect ("Requirement failed: ...").
type requirement struct {
	Type                    string          `json:"type"`
	UUID                    string          `json:"uuid"`
	Ref                     string          `json:"ref"`
	SnapshotID              json.RawMessage `json:"snapshot-id"`
	LastAssignedFieldID     *int            `json:"last-assigned-field-id"`
	CurrentSchemaID         *int            `json:"current-schema-id"`
	LastAssignedPartitionID *int            `json:"last-assigned-partition-id"`
	DefaultSpecID           *int            `json:"default-spec-id"`
	DefaultSortOrderID      *int            `json:"default-sort-order-id"`
}

const reqAssertCreate = "assert-create"

// parseRequirements decodes a requirements array: 400 on malformed JSON,
// an unknown type or a missing field.
func parseRequirements(raw json.RawMessage) ([]requirement, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var reqs []requirement
	if err := json.Unmarshal(raw, &reqs); err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid requirements: %s", fault.ClientText(err))
	}
	for i, r := range reqs {
		missing := ""
		switch r.Type {
		case reqAssertCreate:
		case "assert-table-uuid":
			if r.UUID == "" {
				missing = "uuid"
			}
		case "assert-ref-snapshot-id":
			if r.Ref == "" {
				missing = "ref"
			}
			if r.SnapshotID != nil && string(r.SnapshotID) != "null" {
				var id int64
				if err := json.Unmarshal(r.SnapshotID, &id); err != nil {
					return nil, fault.New(fault.BadRequest, "Invalid requirement %d: snapshot-id must be a long or null", i)
				}
			}
		case "assert-last-assigned-field-id":
			if r.LastAssignedFieldID == nil {
				missing = "last-assigned-field-id"
			}
		case "assert-current-schema-id":
			if r.CurrentSchemaID == nil {
				missing = "current-schema-id"
			}
		case "assert-last-assigned-partition-id":
			if r.LastAssignedPartitionID == nil {
				missing = "last-assigned-partition-id"
			}
		case "assert-default-spec-id":
			if r.DefaultSpecID == nil {
				missing = "default-spec-id"
			}
		case "assert-default-sort-order-id":
			if r.DefaultSortOrderID == nil {
				missing = "default-sort-order-id"
			}
		case "":
			return nil, fault.New(fault.BadRequest, "Invalid requirement %d: missing type", i)
		default:
			return nil, fault.New(fault.BadRequest, "Unknown requirement type: %s", r.Type)
		}
		if missing != "" {
			return nil, fault.New(fault.BadRequest, "Invalid requirement %s: missing field %s", r.Type, missing)
		}
	}
	return reqs, nil
}

func hasAssertCreate(reqs []requirement) bool {
	for _, r := range reqs {
		if r.Type == reqAssertCreate {
			return true
		}
	}
	return false
}

func (r requirement) snapshotID() (int64, bool) {
	if r.SnapshotID == nil || string(r.SnapshotID) == "null" {
		return 0, false
	}
	var id int64
	_ = json.Unmarshal(r.SnapshotID, &id)
	return id, true
}

// check validates r against the current metadata; a failure is a 409
// CommitFailedException that must not be retried.
func (r requirement) check(m table.Metadata) error {
	fail := func(format string, args ...any) error {
		return fault.New(fault.CommitFailed, "Requirement failed: "+format, args...)
	}
	switch r.Type {
	case reqAssertCreate:
		return fail("table already exists")
	case "assert-table-uuid":
		if cur := m.TableUUID().String(); !strings.EqualFold(cur, r.UUID) {
			return fail("UUID does not match: expected %s != %s", cur, r.UUID)
		}
	case "assert-ref-snapshot-id":
		want, wantSet := r.snapshotID()
		var ref *table.SnapshotRef
		for name, rr := range m.Refs() {
			if name == r.Ref {
				rr := rr
				ref = &rr
				break
			}
		}
		if ref != nil {
			kind := "branch"
			if ref.SnapshotRefType == table.TagRef {
				kind = "tag"
			}
			if !wantSet {
				return fail("%s %s was created concurrently", kind, r.Ref)
			}
			if ref.SnapshotID != want {
				return fail("%s %s has changed: expected id %d != %d", kind, r.Ref, want, ref.SnapshotID)
			}
		} else if wantSet {
			return fail("branch or tag %s is missing, expected %d", r.Ref, want)
		}
	case "assert-last-assigned-field-id":
		if cur := m.LastColumnID(); cur != *r.LastAssignedFieldID {
			return fail("last assigned field id changed: expected id %d != %d", *r.LastAssignedFieldID, cur)
		}
	case "assert-current-schema-id":
		if cur := m.CurrentSchema().ID; cur != *r.CurrentSchemaID {
			return fail("current schema changed: expected id %d != %d", *r.CurrentSchemaID, cur)
		}
	case "assert-last-assigned-partition-id":
		cur := 999 // Iceberg's value for a table that never assigned a partition field
		if p := m.LastPartitionSpecID(); p != nil {
			cur = *p
		}
		if cur != *r.LastAssignedPartitionID {
			return fail("last assigned partition id changed: expected id %d != %d", *r.LastAssignedPartitionID, cur)
		}
	case "assert-default-spec-id":
		if cur := m.DefaultPartitionSpec(); cur != *r.DefaultSpecID {
			return fail("default partition spec changed: expected id %d != %d", *r.DefaultSpecID, cur)
		}
	case "assert-default-sort-order-id":
		if cur := m.DefaultSortOrder(); cur != *r.DefaultSortOrderID {
			return fail("default sort order changed: expected id %d != %d", *r.DefaultSortOrderID, cur)
		}
	default:
		return fmt.Errorf("unchecked requirement type %s", r.Type)
	}
	return nil
}

func checkRequirements(reqs []requirement, m table.Metadata) error {
	for _, r := range reqs {
		if err := r.check(m); err != nil {
			return err
		}
	}
	return nil
}
