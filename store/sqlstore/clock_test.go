package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// skewed is a process clock off the real one by d.
func skewed(d time.Duration) func() time.Time { return func() time.Time { return time.Now().Add(d) } }

// TestSkewedReplicasShareTheDatabaseClock: three replicas on one Postgres,
// one 10 minutes ahead and one 10 minutes behind, read the same time from
// Now, and the replica running ahead does not take over a live
// Idempotency-Key lease that a correct replica holds (which would run the
// same request twice).
func TestSkewedReplicasShareTheDatabaseClock(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	open := func(skew time.Duration) *sqlstore.Store {
		st, err := sqlstore.OpenPostgres(ctx, url, true, sqlstore.WithLocalClock(skewed(skew)))
		require.NoError(t, err)
		t.Cleanup(st.Close)
		return st
	}
	right, ahead, behind := open(0), open(10*time.Minute), open(-10*time.Minute)
	for name, st := range map[string]*sqlstore.Store{"right": right, "ahead": ahead, "behind": behind} {
		off, ok := st.ClockOffset()
		require.True(t, ok, "%s: no clock measurement", name)
		require.InDelta(t, 0, time.Since(st.Now()).Seconds(), 1, "%s: Now is %v off (offset %v)", name, time.Since(st.Now()), off)
	}

	claim := store.IdempotencyClaim{Key: "k1", Operation: "POST /t", Fingerprint: "f", Owner: "right", Lease: 5 * time.Second, TTL: time.Hour}
	rec, err := right.IdempotencyBegin(ctx, claim)
	require.NoError(t, err)
	require.Nil(t, rec, "the first claim holds the key")
	claim.Owner = "ahead"
	rec, err = ahead.IdempotencyBegin(ctx, claim)
	require.NoError(t, err)
	require.NotNil(t, rec, "the replica 10 minutes ahead took over a lease that has 5 s left")
	require.Equal(t, "right", rec.Owner)

	// Created stamps agree too: the warehouse created by the replica
	// behind is dated now, not 10 minutes ago.
	w := &store.Warehouse{Name: "wh", Location: "file:///tmp/wh"}
	require.NoError(t, behind.WarehouseCreate(ctx, w))
	got, err := right.WarehouseGet(ctx, "wh")
	require.NoError(t, err)
	require.InDelta(t, 0, time.Since(got.CreatedAt).Seconds(), 5)
}

// TestSQLiteClockIsTheMachines: the embedded database reads this
// machine's clock, so a skewed process clock is corrected to it.
func TestSQLiteClockIsTheMachines(t *testing.T) {
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "c.db"), sqlstore.WithLocalClock(skewed(time.Hour)))
	require.NoError(t, err)
	defer st.Close()
	off, ok := st.ClockOffset()
	require.True(t, ok)
	require.InDelta(t, -time.Hour.Seconds(), off.Seconds(), 0.5)
	require.InDelta(t, 0, time.Since(st.Now()).Seconds(), 0.5)
}
