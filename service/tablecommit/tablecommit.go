// Package tablecommit is the commit path of tables written through the
// REST commit route (updateTable and the multi-table transaction), for
// format versions 1 to 4: it parses a change, checks its requirements,
// applies its updates, encodes the new metadata (by the fast path when the
// format stays), checks that it will load back, writes the metadata file
// and hands the swap and the jobs it enqueues to the commit engine.
//
// The metadata files' names and writes are package tableaccess's, which
// views and v4 snapshot commits share; the jobs a commit enqueues are
// built by package commitjobs and run by package upkeep.
//
// It takes tableaccess and the commit engine as values (Deps) and imports
// the v4 commits for their update planning; it never sees the service.
package tablecommit

import (
	"encoding/json"

	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/tableaccess"
)

// Deps are what table commits need from the catalog, as values.
type Deps struct {
	// Tables gives the store, the warehouse lookup, the table loader and
	// its cache, authorize, file IO and metadata files, the event
	// builders, the clock guard, the clock and the logger.
	Tables *tableaccess.Access
	// Engine runs every commit's attempts (retries, clock guard, outcome).
	Engine *commitengine.Engine
}

// Committer commits table changes.
type Committer struct {
	d Deps
}

// New returns the table committer over d.
func New(d Deps) *Committer {
	return &Committer{d: d}
}

// Result is a committed table's metadata document and its location.
type Result struct {
	MetadataLocation string
	Metadata         []byte
}

// TableChange is one table's requirements and updates, as sent in
// CommitTableRequest (the identifier comes from the path, or from the body
// inside a multi-table transaction).
type TableChange struct {
	Ident        ident.Ident
	Requirements json.RawMessage
	Updates      json.RawMessage
}

// Bounds on one commit. Engines send a handful of updates per commit (a
// create transaction a dozen); the bounds stop a body from making the
// server apply and validate millions of them.
const (
	MaxCommitUpdates      = 1000
	MaxCommitRequirements = 100
	MaxTransactionTables  = 100
)
