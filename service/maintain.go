package service

import (
	"context"
	"encoding/json"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/upkeep"
	"github.com/lakehold/catalog/store"
)

// Snapshot expiry, orphan-file removal and the purge of dropped tables'
// files are done by maintenance.Maintainer; these names and methods keep
// the service's API whole.

// Maintenance types (package maintenance).
type (
	MaintainOptions = maintenance.MaintainOptions
	MaintainReport  = maintenance.MaintainReport
	OrphanOptions   = maintenance.OrphanOptions
	OrphanReport    = maintenance.OrphanReport
)

// Expiry's table properties and orphan removal's windows (package
// maintenance).
const (
	PropMaxSnapshotAge     = maintenance.PropMaxSnapshotAge
	PropMinSnapshotsToKeep = maintenance.PropMinSnapshotsToKeep
	DefaultOrphanAge       = maintenance.DefaultOrphanAge
	MinOrphanAge           = maintenance.MinOrphanAge
)

// Maintain expires a table's old snapshots and deletes the files only they
// reference (maintenance.Maintainer.Maintain, which says what is returned
// when).
func (s *Service) Maintain(ctx context.Context, warehouse string, id Ident, opt MaintainOptions) (*MaintainReport, error) {
	return s.maint.Maintain(ctx, warehouse, id, opt)
}

// RemoveOrphanFiles deletes the files under a table's location that
// nothing references (maintenance.Maintainer.RemoveOrphanFiles, which says
// what is returned when).
func (s *Service) RemoveOrphanFiles(ctx context.Context, warehouse string, id Ident, opt OrphanOptions) (*OrphanReport, error) {
	return s.maint.RemoveOrphanFiles(ctx, warehouse, id, opt)
}

// newMaintainer is the service's maintainer: it authorizes
// table-write-metadata and table-write-data, reads through s.readers and
// commits expiries through the commit engine.
func (s *Service) newMaintainer() *maintenance.Maintainer {
	return maintenance.New(maintenance.Deps{
		Store: s.store,
		Authorize: func(ctx context.Context, warehouse string, id Ident) error {
			for _, p := range []Privilege{PrivTableWriteMetadata, PrivTableWriteData} {
				if err := s.authorize(ctx, p, tableResource(warehouse, id)); err != nil {
					return err
				}
			}
			return nil
		},
		Warehouse: s.warehouse, LoadTable: s.readTable, CommitExpiry: s.commitExpiry,
		WarehouseDefaults: upkeep.WithWarehouseDefaults, Now: s.now, Logger: s.log,
		Files: s.files, Readers: s.readers, FileIO: s.fileIO, IOProps: s.ioProps,
		TablePrefixes: tablePrefixes, FileName: fileName, TableFileName: tableFileName,
	})
}

// commitExpiry commits remove-snapshots for expire through the commit
// engine, requiring every ref to be where it was when the files were
// chosen: a ref moved meanwhile (a rollback to an expiring snapshot) is a
// 409 and nothing is expired.
func (s *Service) commitExpiry(ctx context.Context, w *store.Warehouse, id Ident, meta table.Metadata, expire []int64) (*maintenance.Committed, error) {
	var reqs []map[string]any
	reqs = append(reqs, map[string]any{"type": "assert-table-uuid", "uuid": meta.TableUUID().String()})
	for name, ref := range meta.Refs() {
		reqs = append(reqs, map[string]any{"type": "assert-ref-snapshot-id", "ref": name, "snapshot-id": ref.SnapshotID})
	}
	rawReqs, err := json.Marshal(reqs)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode requirements")
	}
	rawUps, err := json.Marshal([]map[string]any{{"action": "remove-snapshots", "snapshot-ids": expire}})
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode updates")
	}
	c, err := parseChange(TableChange{Ident: id, Requirements: rawReqs, Updates: rawUps})
	if err != nil {
		return nil, err
	}
	res, err := s.commit(ctx, w, []*parsedChange{c})
	if err != nil {
		return nil, err
	}
	return &maintenance.Committed{Object: res[0].obj, Meta: res[0].meta, MetadataLocation: res[0].metaLoc}, nil
}
