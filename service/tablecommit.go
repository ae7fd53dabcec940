package service

import (
	"context"

	"github.com/lakehold/catalog/service/tablecommit"
)

// Table commits through the REST commit route, and the metadata files
// every commit writes, are done by tablecommit.Committer; these names and
// methods keep the service's API whole.

// TableChange is one table's requirements and updates
// (tablecommit.TableChange).
type TableChange = tablecommit.TableChange

// parsedChange is a decoded TableChange (tablecommit.Change).
type parsedChange = tablecommit.Change

// CommitTable applies one table change (tablecommit.Committer.Prepare
// and Commit say what is returned when); an upgrade to format version 4
// is v4migrate's (commitV4Upgrade), answered with V4UpgradeWarning.
func (s *Service) CommitTable(ctx context.Context, warehouse string, change TableChange) (*TableResult, error) {
	k, err := s.tc.Prepare(ctx, warehouse, change)
	if err != nil {
		return nil, err
	}
	if !k.Upgrades() {
		return tableResult(s.tc.Commit(ctx, k))
	}
	res, err := s.commitV4Upgrade(ctx, k.Warehouse, k.Change)
	if res == nil {
		return nil, err
	}
	return &TableResult{MetadataLocation: res.MetadataLocation, Metadata: res.Metadata, Config: map[string]string{}, Warning: V4UpgradeWarning}, err
}

// tableResult is the TableResult of a table commit's result.
func tableResult(r *tablecommit.Result, err error) (*TableResult, error) {
	if r == nil {
		return nil, err
	}
	return &TableResult{MetadataLocation: r.MetadataLocation, Metadata: r.Metadata, Config: map[string]string{}}, err
}
