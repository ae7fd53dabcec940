package v4migrate

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/v4manifest"
)

// foldIntoExport marks the data rows an export with Compact (and without
// FoldSource) folds into the new table: those with column files, and
// below format 3 those with a deletion vector.
func foldIntoExport(in ExportInput, version int, data []v4manifest.TrackedFile) []bool {
	fold := make([]bool, len(data))
	if !in.Compact || in.FoldSource {
		return fold
	}
	for i := range data {
		fold[i] = len(data[i].ColumnFiles) > 0 || (version < 3 && data[i].DeletionVector != nil)
	}
	return fold
}

// afterFolds is data as it will be exported once the marked rows are
// folded (no column files, no deletion vector), for the format checks
// that run before anything is written.
func afterFolds(data []v4manifest.TrackedFile, fold []bool) []v4manifest.TrackedFile {
	out := make([]v4manifest.TrackedFile, len(data))
	for i, r := range data {
		if fold[i] {
			r.ColumnFiles, r.DeletionVector = nil, nil
		}
		out[i] = r
	}
	return out
}

// foldRows folds each marked row of data into the new table, at the base's
// path relative to the table (exportCopiers at a time), and replaces the
// row with the folded file's. A failed fold is returned with its own
// status, reason and details; nothing is exported then.
func (x *export) foldRows(ctx context.Context, data []v4manifest.TrackedFile) error {
	dsts := make([]string, len(data))
	for i := range data {
		if x.fold[i] {
			dsts[i] = x.dest(data[i].Location)
			if !locations.TablePrefixes(x.w, x.loc).Contains(dsts[i]) {
				return fault.New(fault.Internal, "a folded file would land outside the new table")
			}
			x.written = append(x.written, dsts[i])
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(exportCopiers)
	for i := range data {
		if !x.fold[i] {
			continue
		}
		g.Go(func() error {
			row, err := x.m.d.V4.FoldTo(gctx, x.w, x.st, data[i], dsts[i])
			if err != nil {
				return x.foldErr(err, data[i].Location)
			}
			data[i] = row
			return nil
		})
	}
	return g.Wait()
}

// foldErr is a failed fold of base as the export's error, keeping the
// fold's reason and details (required-field-nulls, fold-mismatch, ...).
func (x *export) foldErr(err error, base string) error {
	e := fault.Wrap(fault.KindOf(err), err, "Cannot export: folding %s into the new table failed: %s; nothing was exported",
		x.name(base), fault.ClientText(err))
	var fe *fault.Error
	if errors.As(err, &fe) {
		e.Reason, e.Details = fe.Reason, fe.Details
	}
	return e
}
