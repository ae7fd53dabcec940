package commitengine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/store"
)

// TestCommitOutcomeLabels: a commit refused for the client's mistake (any
// 4xx but a failed requirement) is "rejected", never "error", which is
// kept for failures of ours (5xx); every kind is labelled.
func TestCommitOutcomeLabels(t *testing.T) {
	ours := map[fault.Kind]string{
		fault.Internal:           OutcomeError,
		fault.CommitStateUnknown: OutcomeError,
		fault.Unavailable:        OutcomeUnavailable,
		fault.CommitFailed:       OutcomeRequirementFailed,
	}
	for k := fault.Internal; k <= fault.UnsupportedMedia; k++ {
		want, ok := ours[k]
		if !ok {
			want = OutcomeRejected
		}
		err := fmt.Errorf("staging: %w", fault.New(k, "kind %d", k))
		require.Equal(t, want, StageOutcome(err), "kind %d", k)
	}
	require.Equal(t, OutcomeError, StageOutcome(errors.New("not classified")), "an unclassified error is a 500")

	for _, tc := range []struct {
		err     error
		outcome string
		kind    fault.Kind
	}{
		{store.ErrConflict, OutcomeConflict, fault.CommitFailed},
		{store.ErrLocationOverlap, OutcomeRejected, fault.BadRequest},
		{store.ErrUnavailable, OutcomeUnavailable, fault.Unavailable},
		{errors.New("disk on fire"), OutcomeError, fault.CommitFailed},
	} {
		outcome, err := swapFailure(tc.err, "table", 6)
		require.Equal(t, tc.outcome, outcome, "%v", tc.err)
		require.Equal(t, tc.kind, fault.KindOf(err), "%v", tc.err)
	}
}
