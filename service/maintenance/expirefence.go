package maintenance

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/storefault"
	"github.com/lakehold/catalog/store"
)

// The steps of an expiry that MaintainOptions.Step reports.
const (
	// ExpireCommitted: the remove-snapshots commit has landed; the queued
	// files are not recorded as candidates yet.
	ExpireCommitted = "expire-committed"
	// ExpireClaimed: the queued files are recorded as candidates; the
	// table is about to be read again.
	ExpireClaimed = "expire-claimed"
)

// fenceOutcome is what a fenced clean-up did with the queued files it
// was given (queued locations, as in pending_file_deletes).
type fenceOutcome struct {
	// deleted are gone; kept are referenced by the table as read after
	// the recording; the others (not deleted, not normalizable, or held
	// by a run that claimed them this very millisecond) stay queued and
	// count in failed.
	deleted, kept []string
	failed        int
}

// fencedDelete deletes the queued files doomed (whose expiry has landed)
// through the orphan-file fence, so that a commit that makes the table
// reference one of them again never loses it: they are recorded as
// candidates of a new run (ClaimOrphanCandidates; rows another run left
// at those locations are adopted), the table is read again, the files it
// references are kept, the rest are deleted in batches and their rows
// become tombstones. A commit ordered before the recording is in the
// re-read; one after it that adds a recorded file is refused (409).
// Errors: the store's, 409 when the table was dropped or replaced, the
// re-read's; nothing is deleted then.
func (m *Maintainer) fencedDelete(ctx context.Context, w *store.Warehouse, warehouse string, id ident.Ident, obj *store.Object,
	doomed []string, opt MaintainOptions) (*fenceOutcome, error) {
	out := &fenceOutcome{}
	queued := make(map[string]string, len(doomed)) // normalized -> queued
	var keys []string
	for _, f := range doomed {
		key, err := storagepath.Normalize(f)
		if err != nil {
			out.failed++ // cannot be fenced: stays queued, never deleted
			continue
		}
		queued[key] = f
		keys = append(keys, key)
	}
	run := uuid.NewString()
	held, err := m.claimQueued(ctx, obj.ID, run, keys)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.Wrap(fault.CommitFailed, err, "%s was dropped or replaced during its expiry; its queued files were not deleted", id)
	}
	if err != nil {
		return nil, storefault.Of(err, w.Name)
	}
	out.failed += len(keys) - len(held)
	release := true
	defer func() {
		if release {
			m.release(ctx, obj.ID, run, id)
		}
	}()
	stepExpire(opt, ExpireClaimed)
	now, e, err := m.d.Tables.ReadTable(ctx, warehouse, id)
	if err != nil {
		return nil, err
	}
	if now.ID != obj.ID {
		return nil, fault.New(fault.CommitFailed, "%s was replaced during its expiry; its queued files were not deleted", id)
	}
	refs, err := m.referencedFiles(ctx, w, e.Meta, e.Version, nil)
	if err != nil {
		return nil, err
	}
	live := normalizedKeys(refs)
	var gone []string
	for _, k := range held {
		if live[k] {
			out.kept = append(out.kept, queued[k])
		} else {
			gone = append(gone, k)
		}
	}
	rep := &OrphanReport{}
	release = m.deleteDoomed(ctx, w, obj.ID, run, id, gone, len(held), rep, func(batch []string) {
		for _, k := range batch {
			out.deleted = append(out.deleted, queued[k])
		}
	})
	out.failed += len(gone) - len(out.deleted)
	return out, nil
}

// claimQueued records keys as run's candidates and adopts every other
// row at the others, so that a clean-up a killed expiry left is finished
// by the next run at once (its rows would otherwise hold until their
// lease ran out). Adopting a live run's row is safe: the row never
// leaves, the file is checked by this run's re-read, and that run stops
// at its next renewal. Only queued files are adopted, and orphan removal
// never claims those. It returns the locations run holds.
func (m *Maintainer) claimQueued(ctx context.Context, objectID, run string, keys []string) ([]string, error) {
	held, err := m.d.Tables.Store().ClaimOrphanCandidates(ctx, objectID, run, keys, OrphanLease)
	if err != nil || len(held) == len(keys) {
		return held, err
	}
	mine := make(map[string]bool, len(held))
	for _, k := range held {
		mine[k] = true
	}
	var rest []string
	for _, k := range keys {
		if !mine[k] {
			rest = append(rest, k)
		}
	}
	return m.d.Tables.Store().AdoptOrphanRows(ctx, objectID, run, rest, 0)
}

// normalizedKeys is the set of files normalized; a location that does not
// normalize is not a key any queued file has.
func normalizedKeys(files map[string]bool) map[string]bool {
	out := make(map[string]bool, len(files))
	for f := range files {
		if key, err := storagepath.Normalize(f); err == nil {
			out[key] = true
		}
	}
	return out
}

func stepExpire(opt MaintainOptions, s string) {
	if opt.Step != nil {
		opt.Step(s)
	}
}
