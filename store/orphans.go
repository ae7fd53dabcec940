package store

import (
	"context"
	"errors"
	"time"
)

// ErrOrphanHold is returned by ObjectsSwap and ObjectReplace when the
// change would make a table reference a file that an orphan-file removal
// of that table has recorded for deletion (or, for a swap that does not
// list the files it adds, when any removal holds the table). Nothing was
// written; the same change may land once the removal has finished.
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
// deletion: while the row exists no commit may add the file to the table.
type OrphanCandidate struct {
	ObjectID  string
	Location  string
	RunID     string
	ClaimedAt time.Time
}

// OrphanCandidates is the fence between orphan-file removal and commits.
// A run records its candidates (ClaimOrphanCandidates), re-reads the
// table, deletes only what its re-read does not reference, renewing its
// lease between batches (RenewOrphanCandidates), and releases its rows
// (ReleaseOrphanCandidates). Errors are ErrUnavailable when the database
// is out of reach and ErrDatabase otherwise.
type OrphanCandidates interface {
	// ClaimOrphanCandidates records locations as candidates of run on the
	// table objectID and marks the table held, in one transaction that
	// locks the table's row, so that it is ordered with every swap of the
	// table: a swap ordered before it is seen by a metadata read that
	// follows, a swap ordered after it sees the candidates. Rows of other
	// runs whose claim is older than lease are taken over first (their
	// run is presumed dead); a location a live run holds stays its. It
	// returns the locations run now holds. ErrNoSuchTable when the table
	// does not exist.
	ClaimOrphanCandidates(ctx context.Context, objectID, run string, locations []string, lease time.Duration) ([]string, error)
	// RenewOrphanCandidates stamps the run's rows with the current time
	// and returns how many it still holds (fewer than it claimed: its
	// lease ran out and another run took rows over, and it must stop).
	RenewOrphanCandidates(ctx context.Context, objectID, run string) (int, error)
	// ReleaseOrphanCandidates removes the run's rows (only those in
	// locations, or all of them when locations is nil) and clears the
	// table's hold when no row is left. Missing rows are not an error.
	ReleaseOrphanCandidates(ctx context.Context, objectID, run string, locations []string) error
	// ListOrphanCandidates returns the table's rows ordered by location.
	ListOrphanCandidates(ctx context.Context, objectID string) ([]OrphanCandidate, error)
}
