package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

func candidateLocations(cs []store.OrphanCandidate) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		out[c.Location] = c.RunID
	}
	return out
}

// testOrphanCandidates: a claim records a run's rows and returns what it
// holds; a live run's row is not taken by another run, a stale one is;
// renew counts the rows still held; release removes the named rows or
// all of the run's; a missing table is ErrNotFound.
func testOrphanCandidates(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, other := twoTables(t, s)
	held, err := s.ClaimOrphanCandidates(ctx, o.ID, "r1", []string{"f/b", "f/a", "f/c"}, time.Hour)
	require.NoError(t, err)
	require.Equal(t, []string{"f/a", "f/b", "f/c"}, held)
	held, err = s.ClaimOrphanCandidates(ctx, o.ID, "r2", []string{"f/c", "f/d"}, time.Hour)
	require.NoError(t, err)
	require.Equal(t, []string{"f/d"}, held, "f/c is r1's, whose lease runs")
	rows, err := s.ListOrphanCandidates(ctx, o.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"f/a": "r1", "f/b": "r1", "f/c": "r1", "f/d": "r2"}, candidateLocations(rows))
	none, err := s.ListOrphanCandidates(ctx, other.ID)
	require.NoError(t, err)
	require.Empty(t, none)

	time.Sleep(5 * time.Millisecond)
	held, err = s.ClaimOrphanCandidates(ctx, o.ID, "r3", []string{"f/a", "f/e"}, time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, []string{"f/e"}, held, "stale rows become tombstones, which no run holds")
	rows, err = s.ListOrphanCandidates(ctx, o.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"f/a": "r1", "f/b": "r1", "f/c": "r1", "f/d": "r2", "f/e": "r3"}, candidateLocations(rows))
	for _, r := range rows {
		if r.Location == "f/e" {
			require.Equal(t, store.OrphanPending, r.State)
			require.True(t, r.DeletedAt.IsZero())
		} else {
			require.Equal(t, store.OrphanDeleted, r.State, r.Location)
			require.False(t, r.DeletedAt.IsZero(), r.Location)
		}
	}
	n, err := s.RenewOrphanCandidates(ctx, o.ID, "r1")
	require.NoError(t, err)
	require.Zero(t, n, "r1 lost its rows")
	n, err = s.RenewOrphanCandidates(ctx, o.ID, "r3")
	require.NoError(t, err)
	require.Equal(t, 1, n)

	require.NoError(t, s.ReleaseOrphanCandidates(ctx, o.ID, "r3", []string{"f/e", "f/never"}))
	require.NoError(t, s.ReleaseOrphanCandidates(ctx, o.ID, "r1", nil), "tombstones stay")
	rows, err = s.ListOrphanCandidates(ctx, o.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"f/a": "r1", "f/b": "r1", "f/c": "r1", "f/d": "r2"}, candidateLocations(rows))
	pruned, err := s.PruneOrphanTombstones(ctx, o.ID, time.Now().Add(-time.Hour), 0)
	require.NoError(t, err)
	require.Zero(t, pruned, "young tombstones stay")
	pruned, err = s.PruneOrphanTombstones(ctx, o.ID, time.Now().Add(time.Hour), 0)
	require.NoError(t, err)
	require.Equal(t, 4, pruned)
	rows, err = s.ListOrphanCandidates(ctx, o.ID)
	require.NoError(t, err)
	require.Empty(t, rows)

	var many []string
	for i := range 1100 {
		many = append(many, fmt.Sprintf("f/m%04d", i))
	}
	held, err = s.ClaimOrphanCandidates(ctx, o.ID, "r4", many, time.Hour)
	require.NoError(t, err)
	require.Len(t, held, 1100)
	require.NoError(t, s.ReleaseOrphanCandidates(ctx, o.ID, "r4", many))
	rows, err = s.ListOrphanCandidates(ctx, o.ID)
	require.NoError(t, err)
	require.Empty(t, rows)

	_, err = s.ClaimOrphanCandidates(ctx, "no-such-object", "r5", []string{"x"}, time.Hour)
	require.ErrorIs(t, err, store.ErrNotFound)
}

// testOrphanHoldSwap: while a table is held, a swap that adds a candidate
// or does not list what it adds is refused and writes nothing, on the
// one-statement path and in a transaction; one that adds other files
// lands; a stale expectation is still a conflict; a replace is refused;
// once released, every swap lands again.
func testOrphanHoldSwap(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, other := twoTables(t, s)
	_, err := s.ClaimOrphanCandidates(ctx, o.ID, "r1", []string{"f/old", "f/b"}, time.Hour)
	require.NoError(t, err)

	adds := func(loc string, listed bool, files ...string) store.Swap {
		sw := swapTo(o, loc)
		sw.Adds, sw.AddsListed = files, listed
		return sw
	}
	unlisted := adds("m1", false)
	holdErr := &store.OrphanHoldError{}
	require.ErrorAs(t, s.ObjectsSwap(ctx, []store.Swap{unlisted}), &holdErr)
	require.Empty(t, holdErr.Location)
	err = s.ObjectsSwap(ctx, []store.Swap{adds("m1", true, "f/new", "f/old")})
	require.ErrorIs(t, err, store.ErrOrphanHold)
	require.ErrorAs(t, err, &holdErr)
	require.Equal(t, "f/old", holdErr.Location)
	// In a transaction with another table's swap: all or nothing.
	err = s.ObjectsSwap(ctx, []store.Swap{swapTo(other, "u1"), adds("m1", true, "f/b")})
	require.ErrorIs(t, err, store.ErrOrphanHold)
	loc, err := s.ObjectMetadataLocation(ctx, other.Ref())
	require.NoError(t, err)
	require.Equal(t, other.MetadataLocation, loc, "nothing written")
	loc, err = s.ObjectMetadataLocation(ctx, o.Ref())
	require.NoError(t, err)
	require.Equal(t, o.MetadataLocation, loc, "nothing written")

	stale := adds("m9", true)
	stale.ExpectedMetadataLocation = "not-current"
	require.ErrorIs(t, s.ObjectsSwap(ctx, []store.Swap{stale}), store.ErrConflict)
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{adds("m1", true, "f/new")}), "a file no removal holds")
	o.MetadataLocation = "m1"
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{adds("m2", true)}), "a change that adds no file")
	o.MetadataLocation = "m2"
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{swapTo(other, "u1")}), "another table is not held")

	re := table([]string{"ns"}, "t", "file:///tmp/wh/ns/t")
	require.ErrorIs(t, s.ObjectReplace(ctx, re), store.ErrOrphanHold)

	require.NoError(t, s.ReleaseOrphanCandidates(ctx, o.ID, "r1", nil))
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{adds("m3", false)}), "released: an unlisted swap lands")
	o.MetadataLocation = "m3"
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{adds("m4", true, "f/old")}))
	require.NoError(t, s.ObjectReplace(ctx, re))
}

// testOrphanClaimOrdersSwaps races swaps adding a file against claims of
// that file: a swap either is refused, or lands where a read that follows
// the claim sees it. A swap that lands unseen is the lost file of issue 46.
func testOrphanClaimOrdersSwaps(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, _ := twoTables(t, s)
	cur := o.MetadataLocation
	for i := range 40 {
		file, next := fmt.Sprintf("f/%03d", i), fmt.Sprintf("m%03d", i)
		sw := store.Swap{ObjectID: o.ID, ExpectedMetadataLocation: cur, NewMetadataLocation: next,
			NewMetadata: []byte(`{}`), NewFormatVersion: 2, Adds: []string{file}, AddsListed: i%2 == 0}
		var wg sync.WaitGroup
		var swapErr, claimErr error
		var seen string
		wg.Add(2)
		go func() { defer wg.Done(); swapErr = s.ObjectsSwap(ctx, []store.Swap{sw}) }()
		go func() {
			defer wg.Done()
			if _, claimErr = s.ClaimOrphanCandidates(ctx, o.ID, "r", []string{file}, time.Hour); claimErr == nil {
				seen, claimErr = s.ObjectMetadataLocation(ctx, o.Ref())
			}
		}()
		wg.Wait()
		require.NoError(t, claimErr)
		if swapErr == nil {
			require.Equal(t, next, seen, "round %d: the swap landed after the claim without seeing it", i)
			cur = next
		} else {
			require.ErrorIs(t, swapErr, store.ErrOrphanHold, "round %d", i)
		}
		require.NoError(t, s.ReleaseOrphanCandidates(ctx, o.ID, "r", nil))
	}
}

// testOrphanTombstones: the rows of deleted files stay as tombstones once
// the run releases the rest, and keep refusing a swap that adds them (and
// an unlisted one) until pruned; pruning every table clears the hold.
func testOrphanTombstones(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, other := twoTables(t, s)
	_, err := s.ClaimOrphanCandidates(ctx, o.ID, "r1", []string{"f/x", "f/y"}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, s.TombstoneOrphanCandidates(ctx, o.ID, "r1", []string{"f/x", "f/none"}))
	require.NoError(t, s.TombstoneOrphanCandidates(ctx, o.ID, "other-run", []string{"f/y"}), "not its row: skipped")
	require.NoError(t, s.ReleaseOrphanCandidates(ctx, o.ID, "r1", nil))
	rows, err := s.ListOrphanCandidates(ctx, o.ID)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, "f/x", rows[0].Location)
	require.Equal(t, store.OrphanDeleted, rows[0].State)

	adds := func(loc string, listed bool, files ...string) store.Swap {
		sw := swapTo(o, loc)
		sw.Adds, sw.AddsListed = files, listed
		return sw
	}
	holdErr := &store.OrphanHoldError{}
	require.ErrorAs(t, s.ObjectsSwap(ctx, []store.Swap{adds("m1", true, "f/x")}), &holdErr, "a deleted file")
	require.Equal(t, "f/x", holdErr.Location)
	require.ErrorAs(t, s.ObjectsSwap(ctx, []store.Swap{adds("m1", false)}), &holdErr, "unlisted while tombstones last")
	require.Empty(t, holdErr.Location)
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{adds("m1", true, "f/y")}), "a released candidate")
	o.MetadataLocation = "m1"

	_, err = s.ClaimOrphanCandidates(ctx, other.ID, "r2", []string{"g/z"}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, s.TombstoneOrphanCandidates(ctx, other.ID, "r2", []string{"g/z"}))
	pruned, err := s.PruneOrphanTombstones(ctx, "", time.Now().Add(time.Hour), 0)
	require.NoError(t, err)
	require.Equal(t, 2, pruned, "every table's old tombstones")
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{adds("m2", false)}), "pruned: the hold is gone")
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{swapTo(other, "u1")}))
}

// testOrphanHoldSurvivesUndrop: a table soft-deleted while it has
// tombstones comes back by undrop still held, so a swap adding a deleted
// file (or not listing its files) is refused as before the drop.
func testOrphanHoldSurvivesUndrop(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, _ := twoTables(t, s)
	_, err := s.ClaimOrphanCandidates(ctx, o.ID, "r1", []string{"f/x"}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, s.TombstoneOrphanCandidates(ctx, o.ID, "r1", []string{"f/x"}))
	require.NoError(t, s.ReleaseOrphanCandidates(ctx, o.ID, "r1", nil))
	_, err = s.ObjectSoftDelete(ctx, o.Ref(), o.ID, time.Now().Add(time.Hour), false)
	require.NoError(t, err)
	back, err := s.Undrop(ctx, wh, o.ID, "t")
	require.NoError(t, err)
	sw := swapTo(back, "m1")
	sw.Adds, sw.AddsListed = []string{"f/x"}, true
	require.ErrorIs(t, s.ObjectsSwap(ctx, []store.Swap{sw}), store.ErrOrphanHold, "a deleted file, after undrop")
	sw.Adds, sw.AddsListed = nil, false
	require.ErrorIs(t, s.ObjectsSwap(ctx, []store.Swap{sw}), store.ErrOrphanHold, "unlisted, after undrop")
}

// testOrphanAdopt: a run adopts tombstones and stale candidates of other
// runs at the locations it names (they become its candidates, the table
// stays held throughout), never a live run's row nor a location without
// a row; a pruning with a limit removes the oldest tombstones first and
// keeps the hold while rows remain.
func testOrphanAdopt(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, _ := twoTables(t, s)
	_, err := s.ClaimOrphanCandidates(ctx, o.ID, "dead", []string{"f/a", "f/b"}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, s.TombstoneOrphanCandidates(ctx, o.ID, "dead", []string{"f/a"}))
	_, err = s.ClaimOrphanCandidates(ctx, o.ID, "live", []string{"f/c"}, time.Hour)
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond)
	held, err := s.AdoptOrphanRows(ctx, o.ID, "r", []string{"f/a", "f/b", "f/c", "f/none"}, time.Hour)
	require.NoError(t, err)
	require.Equal(t, []string{"f/a"}, held, "the tombstone; f/b's run is within its lease")
	held, err = s.AdoptOrphanRows(ctx, o.ID, "r", []string{"f/b"}, time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, []string{"f/a", "f/b"}, held, "a stale candidate is adopted too")
	rows, err := s.ListOrphanCandidates(ctx, o.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"f/a": "r", "f/b": "r", "f/c": "live"}, candidateLocations(rows))
	for _, r := range rows {
		require.Equal(t, store.OrphanPending, r.State, r.Location)
		require.True(t, r.DeletedAt.IsZero(), r.Location)
	}
	sw := swapTo(o, "m1")
	sw.Adds, sw.AddsListed = []string{"f/a"}, true
	require.ErrorIs(t, s.ObjectsSwap(ctx, []store.Swap{sw}), store.ErrOrphanHold, "an adopted row still holds its file")
	_, err = s.AdoptOrphanRows(ctx, "no-such-table", "r", []string{"f/a"}, time.Hour)
	require.ErrorIs(t, err, store.ErrNotFound)

	require.NoError(t, s.TombstoneOrphanCandidates(ctx, o.ID, "r", []string{"f/a"}))
	time.Sleep(5 * time.Millisecond)
	require.NoError(t, s.TombstoneOrphanCandidates(ctx, o.ID, "r", []string{"f/b"}))
	pruned, err := s.PruneOrphanTombstones(ctx, "", time.Now().Add(time.Hour), 1)
	require.NoError(t, err)
	require.Equal(t, 1, pruned)
	rows, err = s.ListOrphanCandidates(ctx, o.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"f/b": "r", "f/c": "live"}, candidateLocations(rows), "the oldest went first")
	require.NoError(t, s.ReleaseOrphanCandidates(ctx, o.ID, "live", nil))
	pruned, err = s.PruneOrphanTombstones(ctx, o.ID, time.Now().Add(time.Hour), 1)
	require.NoError(t, err)
	require.Equal(t, 1, pruned)
	require.NoError(t, s.ObjectsSwap(ctx, []store.Swap{swapTo(o, "m2")}), "no row left: the hold is gone")
}

// testOrphanTombstonesAllowReplace: a replace is refused while a removal
// holds candidates of the table, not for its tombstones alone.
func testOrphanTombstonesAllowReplace(t *testing.T, s store.Store) {
	ctx := context.Background()
	o, _ := twoTables(t, s)
	_, err := s.ClaimOrphanCandidates(ctx, o.ID, "r1", []string{"f/x", "f/y"}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, s.TombstoneOrphanCandidates(ctx, o.ID, "r1", []string{"f/x"}))
	re := table([]string{"ns"}, "t", "file:///tmp/wh/ns/t")
	require.ErrorIs(t, s.ObjectReplace(ctx, re), store.ErrOrphanHold, "f/y is still a candidate")
	require.NoError(t, s.ReleaseOrphanCandidates(ctx, o.ID, "r1", nil))
	require.NoError(t, s.ObjectReplace(ctx, re), "tombstones alone do not refuse a replace")
}
