package v4commits

import (
	"errors"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/foldcheck"
)

// rewriteFailure is the client's error for a fold of base (named relative
// to the table) that compact.Rewrite refused. A required field holding
// nulls is bad input already in the table: 400 ValidationException
// (required-field-nulls) naming the field, fixed by committing a column
// file with values for it. A written file that differs from its input is
// the server's own failure and not a race a retry would win, but nothing
// is committed and the state is known, so it is not a 500 (which on a
// commit means "state unknown"): 400 ValidationException with reason
// fold-mismatch, whose message says to report it. Storage out of reach
// is a 503 (nothing committed, retry); anything else a 500 that reveals
// nothing.
func rewriteFailure(err error, base string) error {
	var rn *foldcheck.RequiredNullsError
	if errors.As(err, &rn) {
		e := fault.New(fault.Validation, "Cannot fold %s: required field %s (id %d) holds %d null value(s) in its live rows; folding would write them as zeros. Commit a column file with values for the field first",
			base, rn.Path, rn.FieldID, rn.Nulls)
		e.Reason = foldcheck.ReasonRequiredFieldNulls
		e.Details = map[string]any{"data-file": base, "field": rn.Path, "field-id": rn.FieldID, "nulls": rn.Nulls}
		return e
	}
	var me *foldcheck.MismatchError
	if errors.As(err, &me) {
		e := fault.Wrap(fault.Validation, err, "Cannot fold %s: the rewritten file did not hold the same values as its input (%s); nothing was committed. This is a catalog defect: please report it", base, me.Check)
		e.Reason = foldcheck.ReasonFoldMismatch
		e.Details = map[string]any{"data-file": base, "check": me.Check}
		if me.Field != "" {
			e.Details["field"], e.Details["field-id"] = me.Field, me.FieldID
		}
		return e
	}
	if fault.KindOf(err) == fault.Unavailable {
		return fault.Wrap(fault.Unavailable, err, "Storage unavailable: cannot fold %s, nothing was committed; retry later", base)
	}
	return fault.New(fault.Internal, "cannot rewrite the base file")
}
