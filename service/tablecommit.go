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

// JobDeleteMetadataFiles is the job kind that deletes the metadata files
// a commit dropped from the log (tablecommit.JobDeleteMetadataFiles).
const JobDeleteMetadataFiles = tablecommit.JobDeleteMetadataFiles

// CommitTable applies one table change (tablecommit.Committer.CommitTable,
// which says what is returned when).
func (s *Service) CommitTable(ctx context.Context, warehouse string, change TableChange) (*TableResult, error) {
	return tableResult(s.tc.CommitTable(ctx, warehouse, change))
}

// tableResult is the TableResult of a table commit's result.
func tableResult(r *tablecommit.Result, err error) (*TableResult, error) {
	if r == nil {
		return nil, err
	}
	return &TableResult{MetadataLocation: r.MetadataLocation, Metadata: r.Metadata, Config: map[string]string{}, Warning: r.Warning}, err
}
