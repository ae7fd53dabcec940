// Package planning plans table scans (the REST scan-planning routes): it
// lists the data files, with their column files, deletion vectors and
// delete files, that might hold rows matching a request, from a v4 table's
// root and leaf manifests (through v4read) or, for format v1–v3 tables and
// snapshots older than a table's upgrade to v4, from Avro manifests with
// iceberg-go; and it splits a large plan into plan tasks fetched one by
// one. It takes its dependencies as values (see Deps) and knows nothing of
// the catalog's orchestration (package service), which calls it.
package planning

import (
	"context"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
)

// Deps are what a Planner works with.
type Deps struct {
	// Tables gives authorize, the warehouse lookup, the table loader and
	// the storage of the Avro manifests of v1–v3 tables.
	Tables *tableaccess.Access
	// Readers read v4 manifests.
	Readers *v4read.Readers
	// MaxPlanTasks is how many file scan tasks a plan returns inline; a
	// larger plan is split into plan tasks.
	MaxPlanTasks int
}

// authorizeRead checks that the caller may read the data of table id in
// warehouse: its error (403, or 404 for a table the caller may not see)
// is returned as is.
func (pl *Planner) authorizeRead(ctx context.Context, warehouse string, id ident.Ident) error {
	return pl.d.Tables.AuthorizeTable(ctx, access.PrivTableReadData, warehouse, id)
}

// loadTable returns a table's current metadata and format version (404
// when the table does not exist).
func (pl *Planner) loadTable(ctx context.Context, w *store.Warehouse, id ident.Ident) (table.Metadata, int, error) {
	_, e, err := pl.d.Tables.ReadTable(ctx, w.Name, id)
	if err != nil {
		return nil, 0, err
	}
	return e.Meta, e.Version, nil
}

// Planner plans scans. It holds no state of its own between calls and is
// safe for concurrent use.
type Planner struct {
	d Deps
}

// New returns a Planner over d.
func New(d Deps) *Planner {
	return &Planner{d: d}
}

// tableState is the table a plan reads: its metadata and location.
type tableState struct {
	meta     table.Metadata
	location string
}
