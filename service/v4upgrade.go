package service

import (
	"context"
	"errors"
	"strings"

	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/v4commits"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/requirements"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/internal/v4convert"
	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
	"github.com/lakehold/catalog/validation"
)

// Upgrading a table with snapshots to format version 4 (docs/column-files.md,
// "Upgrading to v4"): the commit that carries `upgrade-format-version: 4`
// reads the live entries of the current snapshot from its Avro manifests,
// converts them into v4 leaves and a root (internal/v4convert) and adds a
// "replace" snapshot pointing at that root, in the same CAS that sets the
// format version. Older snapshots keep their Avro manifest lists; planning
// reads each snapshot with the planner of its manifest list's format.

// wantsV4Upgrade reports whether a commit's updates upgrade to format 4.
func wantsV4Upgrade(info []tablemeta.UpdateInfo) bool {
	for _, u := range info {
		if u.Action == "upgrade-format-version" && u.FormatVersion == FormatV4 {
			return true
		}
	}
	return false
}

// commitV4Upgrade commits a single-table change that upgrades to format
// version 4. When the table's current snapshot is a v1–v3 one it is
// converted (stageV4Upgrade); otherwise the change is staged as any other.
// Errors are those of CommitTable, plus 400 ValidationException (reason
// not-convertible-to-v4) naming what cannot be converted.
func (s *Service) commitV4Upgrade(ctx context.Context, w *store.Warehouse, c *parsedChange) (*TableResult, error) {
	var res *TableResult
	err := s.runCommit(ctx, w, "table", func(ctx context.Context) (*commitengine.Attempt, error) {
		a := &commitengine.Attempt{}
		var err error
		res, err = s.stageV4Upgrade(ctx, w, c, a)
		if err == nil && len(a.Swaps) > 0 {
			// The client's updates, not the converted snapshot's.
			a.Events = nil
			s.addEvent(a, func() store.Event {
				return changeevents.Update(docObject(w.Name, c.Ident, store.KindTable, res.Metadata), who(ctx), c.Updates, c.Requirements)
			})
		}
		return a, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// stageV4Upgrade stages one attempt of an upgrade commit into a.
func (s *Service) stageV4Upgrade(ctx context.Context, w *store.Warehouse, c *parsedChange, a *commitengine.Attempt) (*TableResult, error) {
	obj, prev, err := s.readTable(ctx, w.Name, c.Ident)
	if err != nil {
		return nil, err
	}
	cur := prev.Meta.CurrentSnapshot()
	if cur == nil || (prev.Version == FormatV4 && !v4read.LegacyManifestList(cur.ManifestList)) {
		return s.stagePlain(ctx, w, c, a)
	}
	if err := requirements.Check(c.Reqs, prev.Meta); err != nil {
		return nil, err
	}
	_, ups, err := v4commits.PlanUpdates(FormatV4, false, c.Parsed, c.Info)
	if err != nil {
		return nil, err
	}
	meta, err := applyUpdates(prev.Meta, withRowLineage(prev.Version, ups))
	if err != nil {
		return nil, err
	}
	if cur = meta.CurrentSnapshot(); cur == nil || !v4read.LegacyManifestList(cur.ManifestList) {
		return nil, fault.New(fault.BadRequest, "An upgrade to format version 4 cannot also change the current snapshot: commit those updates separately")
	}
	out, err := s.convertSnapshot(ctx, w, meta, cur)
	if err != nil {
		return nil, err
	}
	assigned := v4convert.AssignRowIDs(out, meta.NextRowID())
	// The upgraded view is not stored: its entry has no document to copy
	// snapshots from, so the new document encodes all of them.
	entry := &tablemeta.Entry{Meta: tablemeta.Hold(meta), Version: FormatV4}
	st := v4commits.NewState(obj, entry)
	t := s.v4.NewTx(w, st, a)
	res, err := v4convert.Tree(t.Snapshot(), out, s.opts.MaxLeafEntries, cur.SnapshotID)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "lay out the converted manifests")
	}
	res.AddedRows = assigned // next-row-id moves past the ids just assigned
	return v4Result(s.v4.StageSnapshot(ctx, t, res))
}

// withRowLineage puts an upgrade to format version 3 before ups when the
// table is older (v1 or v2): the conversion then starts from a v3 view
// with row lineage (next-row-id 0, as the spec's v3 upgrade sets it) and
// assigns row ids to the files written before it (AssignRowIDs).
func withRowLineage(version int, ups table.Updates) table.Updates {
	if version >= 3 {
		return ups
	}
	return append(table.Updates{table.NewUpgradeFormatVersionUpdate(3)}, ups...)
}

// stagePlain stages a change as CommitTable does for any single table
// (tablecommit.Committer.StagePlain).
func (s *Service) stagePlain(ctx context.Context, w *store.Warehouse, c *parsedChange, a *commitengine.Attempt) (*TableResult, error) {
	return tableResult(s.tc.StagePlain(ctx, w, c, a))
}

// applyUpdates applies updates (the v3 view's) to base in memory: 400 for
// an update that does not apply.
func applyUpdates(base table.Metadata, ups table.Updates) (table.Metadata, error) {
	if len(ups) == 0 {
		return base, nil
	}
	// No metadata location: v4commits.Committer.StageSnapshot's builder logs the file this
	// commit replaces, once.
	b, err := table.MetadataBuilderFromBase(base, "")
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "metadata builder")
	}
	for _, u := range ups {
		if err := u.Apply(b); err != nil {
			return nil, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
		}
	}
	meta, err := b.Build()
	if err != nil {
		return nil, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
	}
	return meta, nil
}

// convertSnapshot reads the live entries of snap's Avro manifests and
// converts them: 400 ValidationException (reason not-convertible-to-v4)
// naming what cannot be converted, 500 when a manifest cannot be read.
func (s *Service) convertSnapshot(ctx context.Context, w *store.Warehouse, meta table.Metadata, snap *table.Snapshot) (*v4convert.Output, error) {
	entries, err := s.liveEntries(ctx, w, meta, snap)
	if err != nil {
		return nil, err
	}
	out, err := v4convert.Convert(v4convert.Input{Schema: meta.CurrentSchema(), Specs: meta.PartitionSpecs(), Entries: entries})
	var ue *v4convert.UnsupportedError
	if errors.As(err, &ue) {
		name := ue.Example
		if v4manifest.IsAbsolute(name) || strings.HasPrefix(name, "/") {
			name = fileName(w, meta.Location(), name) // never a server path
		}
		e := v4commits.Reject(validation.ReasonNotConvertible, "Cannot upgrade to format version 4: snapshot %d has %d %s, which format version 4 cannot express (e.g. %s); %s",
			snap.SnapshotID, ue.Count, ue.What, name, ue.Hint)
		e.Details = map[string]any{"count": ue.Count, "example": name}
		return nil, e
	}
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "convert snapshot %d", snap.SnapshotID)
	}
	return out, nil
}

// liveEntries reads the ADDED and EXISTING entries of every manifest of
// snap (through the planning IO: files outside the table are refused).
func (s *Service) liveEntries(ctx context.Context, w *store.Warehouse, meta table.Metadata, snap *table.Snapshot) ([]iceberg.ManifestEntry, error) {
	fs, err := s.planner.IO(w, meta.Location())(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, upgradeReadErr(err, snap.SnapshotID)
	}
	var entries []iceberg.ManifestEntry
	for _, m := range manifests {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, upgradeReadErr(err, snap.SnapshotID)
			}
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// upgradeReadErr is the 500 for a manifest list or manifest that cannot be
// read, without its path.
func upgradeReadErr(err error, snapID int64) error {
	if errors.Is(err, planning.ErrOutsideTable) {
		return fault.New(fault.Internal, "Cannot upgrade: snapshot %d references a manifest outside the table's location", snapID)
	}
	return fault.Wrap(fault.Internal, errors.New(planning.WithoutPaths(err.Error())),
		"Cannot upgrade: a manifest of snapshot %d cannot be read", snapID)
}
