package service

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

// TestCommitOutcomeLabels: a commit refused for the client's mistake (any
// 4xx but a failed requirement) is "rejected", never "error", which is
// kept for failures of ours (5xx); every kind is labelled.
func TestCommitOutcomeLabels(t *testing.T) {
	ours := map[Kind]string{
		KindInternal:           outcomeError,
		KindCommitStateUnknown: outcomeError,
		KindUnavailable:        outcomeUnavailable,
		KindCommitFailed:       outcomeRequirementFailed,
	}
	for k := KindInternal; k <= KindUnsupportedMedia; k++ {
		want, ok := ours[k]
		if !ok {
			want = outcomeRejected
		}
		err := fmt.Errorf("staging: %w", newErr(k, "kind %d", k))
		require.Equal(t, want, stageOutcome(err), "kind %d", k)
	}
	require.Equal(t, outcomeError, stageOutcome(errors.New("not classified")), "an unclassified error is a 500")

	for _, tc := range []struct {
		err     error
		outcome string
		kind    Kind
	}{
		{store.ErrConflict, outcomeConflict, KindCommitFailed},
		{store.ErrLocationOverlap, outcomeRejected, KindBadRequest},
		{store.ErrUnavailable, outcomeUnavailable, KindUnavailable},
		{errors.New("disk on fire"), outcomeError, KindCommitFailed},
	} {
		outcome, err := swapFailure(tc.err, "table", 6)
		require.Equal(t, tc.outcome, outcome, "%v", tc.err)
		require.Equal(t, tc.kind, KindOf(err), "%v", tc.err)
	}
}
