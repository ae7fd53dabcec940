package service

import (
	"github.com/lakehold/catalog/service/changefeed"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/functions"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/service/reports"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/tablecommit"
	"github.com/lakehold/catalog/service/tables"
	"github.com/lakehold/catalog/service/upkeep"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/service/v4migrate"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/service/views"
	"github.com/lakehold/catalog/service/warehouses"
)

// buildRooms builds the rooms over s.ta, each after the rooms it takes
// (their layers: internal/depcheck/rooms_test.go). Every commit runs
// through the one commit engine (package commitengine states the outcome
// contract); its retries, clock guard, metrics, spans and the removal of
// files no commit references are the service's options.
func (s *Service) buildRooms() {
	// A changed storage profile drops the warehouse from s.ta's cache.
	s.whs = warehouses.New(warehouses.Deps{Store: s.store, Tables: s.ta, Sealer: s.opts.Sealer})
	s.readers = v4read.New(s.ta.FileIO, locations.FileName)
	s.engine = commitengine.New(s.store, commitengine.Options{MaxAttempts: s.opts.MaxCommitAttempts, ClockGuard: s.ta.ClockGuard,
		OnOutcome: s.opts.OnCommit, Remove: s.ta.DeleteOrphan, Tracer: s.tracer, Logger: s.log})
	s.tc = tablecommit.New(tablecommit.Deps{Tables: s.ta, Engine: s.engine})
	s.broker = storageaccess.New(storageaccess.Deps{Tables: s.ta, Credentials: s.opts.Credentials, Signer: s.opts.Signer, Audit: s.RecordAudit})
	s.tables = tables.New(tables.Deps{Tables: s.ta, Commits: s.tc, Broker: s.broker, VerifyMetadataOnLoad: s.opts.VerifyMetadataOnLoad})
	s.views = views.New(views.Deps{Tables: s.ta, Engine: s.engine})
	s.fns = functions.New(functions.Deps{Tables: s.ta, Engine: s.engine})
	s.feed = changefeed.New(s.store, s.opts.Events, s.ta)
	s.reps = reports.New(s.ta, s.opts.ReportsRetention, s.opts.ReportsPerTable)
	s.planner = planning.New(planning.Deps{Tables: s.ta, Readers: s.readers, MaxPlanTasks: s.opts.MaxPlanTasks})
	s.maint = maintenance.New(maintenance.Deps{Tables: s.ta, Readers: s.readers, Commits: s.tc})
	s.v4 = v4commits.New(v4commits.Deps{Tables: s.ta, Engine: s.engine, Readers: s.readers, MaxLeafEntries: s.opts.MaxLeafEntries})
	s.upkeep = upkeep.New(upkeep.Deps{Tables: s.ta, Maint: s.maint, V4: s.v4})
	s.migrate = v4migrate.New(v4migrate.Deps{Tables: s.ta, Engine: s.engine, V4: s.v4, Commits: s.tc, Readers: s.readers,
		Planner: s.planner, Broker: s.broker, MaxLeafEntries: s.opts.MaxLeafEntries})
}

// The rooms callers reach directly; each room's methods say what they
// return when.

// Tables is the table room: creates, registers, loads, lists, renames and
// drops of tables, and the listing, renaming and dropping of views and
// functions.
func (s *Service) Tables() *tables.Tables { return s.tables }

// TableCommits is the table committer (commits through the REST route,
// single table and transaction).
func (s *Service) TableCommits() *tablecommit.Committer { return s.tc }

// Planner is scan planning: plans, plan tasks, their status and cancel.
func (s *Service) Planner() *planning.Planner { return s.planner }

// Maintainer is table maintenance: snapshot expiry and orphan removal.
func (s *Service) Maintainer() *maintenance.Maintainer { return s.maint }

// V4Commits is the v4 committer: live column files and compaction (its
// commits are reached through CommitFiles, CommitColumnFiles and
// CommitCompaction, which answer a TableResult).
func (s *Service) V4Commits() *v4commits.Committer { return s.v4 }

// Upkeep is the background work: the job kinds, the job listing and
// stats, soft-deleted objects and undrop.
func (s *Service) Upkeep() *upkeep.Upkeep { return s.upkeep }

// Reports is engines' metrics reports: recorded from the metrics route,
// listed through the management route, pruned by their job.
func (s *Service) Reports() *reports.Reports { return s.reps }

// Warehouses is the warehouse registry: delete and storage profiles (the
// service's CreateWarehouse, GetWarehouse and ListWarehouses answer its
// own Warehouse type).
func (s *Service) Warehouses() *warehouses.Registry { return s.whs }
