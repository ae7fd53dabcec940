package store

import (
	"context"
	"errors"
	"time"
)

// ErrOrphanHold is returned by ObjectsSwap and ObjectReplace when the
// change would make a table reference a file that an orphan-file removal
// of that table has recorded for deletion or has deleted (a tombstone),
// or, for a swap that does not list the files it adds, when the table has
// any such row. Nothing was written. A change naming a deleted file never
// lands while the tombstone lasts; an unlisted one lands once it lists
// its files (Swap.Adds).
var ErrOrphanHold = errors.New("file held by an orphan-file removal")

// OrphanHoldError is ErrOrphanHold with the file that caused it.
type OrphanHoldError struct {
	ObjectID string
	// Location is the held file the change adds; empty when the change
	// did not list the files it adds.
	Location string
}

func (e *OrphanHoldError) Error() string {
	if e.Location == "" {
		return ErrOrphanHold.Error() + ": object " + e.ObjectID
	}
	return ErrOrphanHold.Error() + ": " + e.Location
}

// Unwrap makes errors.Is(err, ErrOrphanHold) hold.
func (e *OrphanHoldError) Unwrap() error { return ErrOrphanHold }

// OrphanCandidate is a file an orphan-file removal run has recorded for
// deletion (State OrphanPending) or has deleted (OrphanDeleted, a
// tombstone): while the row exists no commit may add the file to the
// table.
type OrphanCandidate struct {
	ObjectID  string
	Location  string
	RunID     string
	ClaimedAt time.Time
	State     string
	// DeletedAt is when the row became a tombstone; zero for a candidate.
	DeletedAt time.Time
}

// States of an OrphanCandidate row.
const (
	OrphanPending = "candidate"
	OrphanDeleted = "deleted"
)

// OrphanCandidates is the fence between orphan-file removal and commits.
// A run records its candidates (ClaimOrphanCandidates), re-reads the
// table, deletes only what its re-read does not reference, renewing its
// lease between batches (RenewOrphanCandidates), turns the rows of what it
// deleted into tombstones (TombstoneOrphanCandidates) and releases the
// rest (ReleaseOrphanCandidates); tombstones are pruned once old
// (PruneOrphanTombstones). Errors are ErrUnavailable when the database is
// out of reach and ErrDatabase otherwise.
type OrphanCandidates interface {
	// ClaimOrphanCandidates records locations as candidates of run on the
	// table objectID and marks the table held, in one transaction that
	// locks the table's row, so that it is ordered with every swap of the
	// table: a swap ordered before it is seen by a metadata read that
	// follows, a swap ordered after it sees the candidates. Candidate rows
	// of other runs whose claim is older than lease become tombstones
	// first (their run is presumed dead, and may have deleted them); a
	// location with any other row stays that row's. It returns the
	// locations run now holds as candidates. ErrNoSuchTable when the
	// table does not exist.
	ClaimOrphanCandidates(ctx context.Context, objectID, run string, locations []string, lease time.Duration) ([]string, error)
	// RenewOrphanCandidates stamps the run's candidate rows with the
	// current time and returns how many it still holds as candidates
	// (fewer than it claimed and has not tombstoned: its lease ran out and
	// another run turned its rows into tombstones, and it must stop).
	RenewOrphanCandidates(ctx context.Context, objectID, run string) (int, error)
	// TombstoneOrphanCandidates turns the run's candidate rows at
	// locations into tombstones stamped with the current time: the files
	// are deleted, and no commit may add them until the tombstones are
	// pruned. Locations without a candidate row of the run are skipped.
	TombstoneOrphanCandidates(ctx context.Context, objectID, run string, locations []string) error
	// ReleaseOrphanCandidates removes the run's candidate rows (only those
	// in locations, or all of them when locations is nil; tombstones stay)
	// and clears the table's hold when no row is left. Missing rows are
	// not an error.
	ReleaseOrphanCandidates(ctx context.Context, objectID, run string, locations []string) error
	// AdoptOrphanRows makes the table's rows at locations that are
	// tombstones, or candidates of another run claimed before now minus
	// lease, candidates of run claimed now, in one transaction that locks
	// the table's row, and returns the locations run now holds as
	// candidates. It is for a clean-up that must finish deleting files a
	// dead run left rows for (a cut-short snapshot expiry): the row never
	// leaves, so no commit can add the file meanwhile. Rows of live runs
	// stay theirs; locations without a row are skipped. ErrNoSuchTable
	// when the table does not exist.
	AdoptOrphanRows(ctx context.Context, objectID, run string, locations []string, lease time.Duration) ([]string, error)
	// PruneOrphanTombstones removes the tombstones deleted before before,
	// of the table objectID or, when objectID is "", of every table, and
	// clears the hold of each table left without rows. limit > 0 bounds
	// how many it removes (the oldest first); it returns how many it
	// removed.
	PruneOrphanTombstones(ctx context.Context, objectID string, before time.Time, limit int) (int, error)
	// ListOrphanCandidates returns the table's rows ordered by location.
	ListOrphanCandidates(ctx context.Context, objectID string) ([]OrphanCandidate, error)
}
