package v4commits

import (
	"context"

	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/v4manifest"
)

// totalsCols is the projection a count of a tree's totals reads from each
// leaf: what v4tree.Totals needs of a row.
var totalsCols = []int{v4manifest.IDLocation, v4manifest.IDTracking, v4manifest.IDRecordCount, v4manifest.IDFileSize,
	v4manifest.IDDeletionVector, v4manifest.IDColumnFiles}

// addTotals gives res's summary the table totals after the commit: the
// parent snapshot's totals plus the commit's delta. A tree that set its
// totals itself (a conversion) keeps them. A parent whose summary has no
// totals (written before v4 summaries carried them) has its tree counted
// once, reading every live leaf narrowly; the next snapshot then starts
// from this one's totals. When that count cannot be done the totals are
// left out (the commit goes on: totals are informative, never read back
// by the catalog except as the next parent's).
func (cm *Committer) addTotals(ctx context.Context, t *Tx, res *v4tree.Result) {
	if _, known := v4tree.ParentTotals(res.Summary); known {
		return
	}
	var base map[string]int64
	if cur := t.st.meta.CurrentSnapshot(); cur != nil {
		var ok bool
		if cur.Summary != nil {
			base, ok = v4tree.ParentTotals(cur.Summary.Properties)
		}
		if !ok {
			var err error
			if base, err = cm.treeTotals(ctx, t); err != nil {
				cm.log.Warn("snapshot totals left out: the parent's tree could not be counted", "error", err.Error())
				return
			}
		}
	}
	if !res.AddTotals(base) {
		cm.log.Warn("snapshot totals left out: the parent's totals do not match the commit", "snapshot-id", t.snapID)
	}
}

// treeTotals counts the totals of the current snapshot's tree (t's root
// rows and their live leaves). Its errors are the leaf reads'.
func (cm *Committer) treeTotals(ctx context.Context, t *Tx) (map[string]int64, error) {
	var rows []v4manifest.TrackedFile
	for i := range t.st.rootRows {
		rr := &t.st.rootRows[i]
		switch {
		case !rr.Tracking.Status.Live():
		case rr.ContentType == v4manifest.ContentDataManifest || rr.ContentType == v4manifest.ContentDeleteManifest:
			leaf, err := cm.readers.Leaf(ctx, t.w, t.st.location, rr, totalsCols)
			if err != nil {
				return nil, err
			}
			rows = append(rows, leaf...)
		default:
			rows = append(rows, *rr)
		}
	}
	return v4tree.Totals(rows), nil
}
