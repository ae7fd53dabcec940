// Package v4migrate moves tables across the format-version-4 line, both
// ways: the upgrade of a v1–v3 table in place (its current snapshot's Avro
// manifests become a v4 manifest tree in the commit that sets the format
// version) and the export of a v4 table's current snapshot into a new
// v1–v3 table. Both are conversions between the two manifest formats,
// which is why they share a room; v4 commits themselves live in
// v4commits.
//
// It takes the store, the v4 committer and readers, the commit loop, the
// create checks, storage and the event builders as values (Deps): the
// parsing of commits and the plain (non-upgrading) commit path stay with
// the service.
package v4migrate

import (
	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/tablecommit"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/service/v4read"
)

// Deps are what the upgrade and the export need from the catalog, as
// values.
type Deps struct {
	// Tables gives the store, the table loader, the checks of a create,
	// file IO, metadata files, the event builders and the clock.
	Tables *tableaccess.Access
	// Engine runs the upgrade's and the export's commits.
	Engine *commitengine.Engine
	// V4 stages the upgraded snapshot, loads the snapshot exported and
	// compacts an export's source when asked.
	V4 *v4commits.Committer
	// Commits checks a new metadata document before it is written.
	Commits *tablecommit.Committer
	// Readers read the exported snapshot's leaf manifests.
	Readers *v4read.Readers
	// Planner opens the Avro manifests of a v1–v3 table (Planner.IO).
	Planner *planning.Planner
	// Broker refuses, before any work, a delegation that cannot be served
	// and grants the exported table's config and credentials.
	Broker *storageaccess.Broker
	// MaxLeafEntries bounds the rows of a converted leaf manifest.
	MaxLeafEntries int
}

// Migrator upgrades tables to format version 4 and exports v4 tables.
type Migrator struct {
	d Deps
}

// New returns the upgrade and export over d.
func New(d Deps) *Migrator {
	return &Migrator{d: d}
}

// Result is a table as an upgrade or an export leaves it: its metadata
// file and, for an export, the storage access its caller asked for.
type Result struct {
	MetadataLocation   string
	Metadata           []byte
	Config             map[string]string
	StorageCredentials []credentials.StorageCredential
}

// v4Result is the Result of a v4 commit's result.
func v4Result(r *v4commits.Result, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	return &Result{MetadataLocation: r.MetadataLocation, Metadata: r.Metadata, Config: map[string]string{}}, nil
}
