package service

import (
	"context"

	"github.com/lakehold/catalog/service/tablecommit"
	"github.com/lakehold/catalog/store"
)

// Table commits through the REST commit route, and the metadata files
// every commit writes, are done by tablecommit.Committer; these names and
// methods keep the service's API whole.

// TableChange is one table's requirements and updates
// (tablecommit.TableChange).
type TableChange = tablecommit.TableChange

// parsedChange is a decoded TableChange (tablecommit.Change).
type parsedChange = tablecommit.Change

// Bounds on one commit (package tablecommit).
const (
	MaxCommitUpdates      = tablecommit.MaxCommitUpdates
	MaxCommitRequirements = tablecommit.MaxCommitRequirements
	MaxTransactionTables  = tablecommit.MaxTransactionTables
)

// JobDeleteMetadataFiles is the job kind that deletes the metadata files
// a commit dropped from the log (tablecommit.JobDeleteMetadataFiles).
const JobDeleteMetadataFiles = tablecommit.JobDeleteMetadataFiles

// CommitTable applies one table change (tablecommit.Committer.CommitTable,
// which says what is returned when).
func (s *Service) CommitTable(ctx context.Context, warehouse string, change TableChange) (*TableResult, error) {
	return tableResult(s.tc.CommitTable(ctx, warehouse, change))
}

// CommitTransaction applies several table changes atomically
// (tablecommit.Committer.CommitTransaction, which says what is returned
// when).
func (s *Service) CommitTransaction(ctx context.Context, warehouse string, changes []TableChange) error {
	return s.tc.CommitTransaction(ctx, warehouse, changes)
}

// tableResult is the TableResult of a table commit's result.
func tableResult(r *tablecommit.Result, err error) (*TableResult, error) {
	if r == nil {
		return nil, err
	}
	return &TableResult{MetadataLocation: r.MetadataLocation, Metadata: r.Metadata, Config: map[string]string{}, Warning: r.Warning}, err
}

// newTableCommit is the service's table committer: it runs through
// s.engine and hands upgrades to format version 4 to commitV4Upgrade.
func (s *Service) newTableCommit() *tablecommit.Committer {
	return tablecommit.New(tablecommit.Deps{
		Tables: s.ta, Engine: s.engine, MaxClockSkew: s.opts.MaxClockSkew,
		CommitV4Upgrade: func(ctx context.Context, w *store.Warehouse, c *parsedChange) (*tablecommit.Result, error) {
			res, err := s.commitV4Upgrade(ctx, w, c)
			if res == nil {
				return nil, err
			}
			return &tablecommit.Result{MetadataLocation: res.MetadataLocation, Metadata: res.Metadata, Warning: V4UpgradeWarning}, err
		},
	})

}
