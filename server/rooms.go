package server

import (
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/changefeed"
	"github.com/lakehold/catalog/service/functions"
	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/service/reports"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/tablecommit"
	"github.com/lakehold/catalog/service/tables"
	"github.com/lakehold/catalog/service/upkeep"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/service/views"
	"github.com/lakehold/catalog/service/warehouses"
)

// rooms are the service's rooms the handlers call, taken from the service
// once so that a request goes from its handler to the room directly.
type rooms struct {
	tables     *tables.Tables
	commits    *tablecommit.Committer
	views      *views.Views
	functions  *functions.Functions
	planner    *planning.Planner
	maint      *maintenance.Maintainer
	v4         *v4commits.Committer
	upkeep     *upkeep.Upkeep
	warehouses *warehouses.Registry
	storage    *storageaccess.Broker
	events     *changefeed.Feed
	reports    *reports.Reports
	admin      *access.Admin
}

// roomsOf takes the rooms of svc.
func roomsOf(svc *service.Service) rooms {
	return rooms{tables: svc.Tables(), commits: svc.TableCommits(), views: svc.Views(), functions: svc.Functions(), planner: svc.Planner(),
		maint: svc.Maintainer(), v4: svc.V4Commits(), upkeep: svc.Upkeep(), warehouses: svc.Warehouses(),
		storage: svc.Storage(), events: svc.Events(), reports: svc.Reports(), admin: svc.Admin()}
}
