package service

import (
	"context"

	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/v4migrate"
	"github.com/lakehold/catalog/store"
)

// The upgrade to format version 4 and the export of a v4 table are done by
// v4migrate.Migrator; these names and methods keep the service's API whole.

// ExportInput asks for the export of a v4 table's current snapshot
// (v4migrate.ExportInput).
type ExportInput = v4migrate.ExportInput

// ExportTable exports in.Source's current snapshot to a new table
// in.Target (v4migrate.Migrator.Export, which says what is returned when).
func (s *Service) ExportTable(ctx context.Context, warehouse string, in ExportInput) (*TableResult, error) {
	return migrated(s.migrate.Export(ctx, warehouse, in))
}

// commitV4Upgrade commits a single-table change that upgrades to format
// version 4 (v4migrate.Migrator.Upgrade, which says what is returned
// when); a table with nothing to convert commits as any other
// (stagePlain).
func (s *Service) commitV4Upgrade(ctx context.Context, w *store.Warehouse, c *parsedChange) (*TableResult, error) {
	return migrated(s.migrate.Upgrade(ctx, w, &v4migrate.Change{
		Ident: c.Ident, Requirements: c.Reqs, Updates: c.Parsed, Info: c.Info,
		RawUpdates: c.Updates, RawRequirements: c.Requirements,
		Plain: func(ctx context.Context, a *commitengine.Attempt) (*v4migrate.Result, error) {
			return s.stagePlain(ctx, w, c, a)
		},
	}))
}

// stagePlain stages a change as CommitTable does for any single table
// (tablecommit.Committer.StagePlain).
func (s *Service) stagePlain(ctx context.Context, w *store.Warehouse, c *parsedChange, a *commitengine.Attempt) (*v4migrate.Result, error) {
	r, err := s.tc.StagePlain(ctx, w, c, a)
	if err != nil {
		return nil, err
	}
	return &v4migrate.Result{MetadataLocation: r.MetadataLocation, Metadata: r.Metadata, Config: map[string]string{}}, nil
}

// migrated is the TableResult of an upgrade's or an export's result.
func migrated(r *v4migrate.Result, err error) (*TableResult, error) {
	if err != nil {
		return nil, err
	}
	return &TableResult{MetadataLocation: r.MetadataLocation, Metadata: r.Metadata, Config: r.Config, StorageCredentials: r.StorageCredentials,
		RemoteSigning: storageaccess.RemoteSigningOf(r.Config)}, nil
}
