package service

import (
	"context"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/service/tableaccess"
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

// The names the rest of the package calls for the metadata files
// (package tablecommit).

func newMetadataLocation(loc string, props map[string]string, previous string) string {
	return tablecommit.NewMetadataLocation(loc, props, previous)
}

func (s *Service) checkNewMetadata(prev, next table.Metadata, data []byte) error {
	return s.tc.CheckNewMetadata(prev, next, data)
}

func (s *Service) writeMetadataFile(ctx context.Context, w *store.Warehouse, loc string, data []byte) error {
	return s.tc.WriteMetadataFile(ctx, w, loc, data)
}

func (s *Service) writeNextMetadata(ctx context.Context, w *store.Warehouse, obj *store.Object, loc string, props map[string]string, data []byte) (string, string, error) {
	return s.tc.WriteNextMetadata(ctx, w, obj, loc, props, data)
}

func (s *Service) deleteOrphan(ctx context.Context, w *store.Warehouse, loc string) {
	s.tc.DeleteOrphan(ctx, w, loc)
}

func (s *Service) deleteTableFile(ctx context.Context, w *store.Warehouse, tableLoc, loc string) {
	s.tc.DeleteTableFile(ctx, w, tableLoc, loc)
}

// newTableCommit is the service's table committer: it runs through
// s.engine, enqueues the policies of s.upkeep (built after it, hence the
// closure) and hands upgrades to format version 4 to commitV4Upgrade.
func (s *Service) newTableCommit() *tablecommit.Committer {
	return tablecommit.New(tablecommit.Deps{
		Store: s.store, Engine: s.engine, Authorize: s.ta.Authorize, Warehouse: s.ta.Warehouse, ReadTable: s.ta.ReadTable,
		FileIO: s.ta.FileIO, CacheMeta: s.ta.CacheMeta, ClockGuard: s.ta.ClockGuard,
		PolicyJobs: func(w *store.Warehouse, id Ident, meta table.Metadata) []store.Job {
			return s.upkeep.PolicyJobs(w, id, meta)
		},
		GuardV4: guardV4, WantsV4Upgrade: wantsV4Upgrade,
		CommitV4Upgrade: func(ctx context.Context, w *store.Warehouse, c *parsedChange) (*tablecommit.Result, error) {
			res, err := s.commitV4Upgrade(ctx, w, c)
			if res == nil {
				return nil, err
			}
			return &tablecommit.Result{MetadataLocation: res.MetadataLocation, Metadata: res.Metadata, Warning: V4UpgradeWarning}, err
		},
		CheckTableMetadataLocations: s.checkTableMetadataLocations, CheckObjectLocation: checkObjectLocation,
		CheckWritePaths: checkWritePaths, DefaultLocation: defaultLocation, TablePrefixes: tablePrefixes, FileName: fileName,
		AddEvent: s.ta.AddEvent, WithEvent: s.ta.WithEvent, TableObject: tableaccess.TableObject, Who: tableaccess.Who, PutErr: tableaccess.PutErr,
		MaxClockSkew: s.opts.MaxClockSkew, Now: s.now, Logger: s.log,
	})
}
