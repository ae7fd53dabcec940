package v4migrate

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/requirements"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/internal/v4convert"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/v4commits"
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

// Change is a parsed single-table commit that upgrades to format version 4.
type Change struct {
	Ident        ident.Ident
	Requirements []requirements.Requirement
	Updates      table.Updates
	Info         []tablemeta.UpdateInfo
	// RawUpdates and RawRequirements are the request's own, for the
	// change event.
	RawUpdates, RawRequirements json.RawMessage
	// Plain stages the change into a as any other single-table commit: the
	// upgrade's path when there is no v1–v3 snapshot to convert.
	Plain func(ctx context.Context, a *commitengine.Attempt) (*Result, error)
}

// Upgrade commits a single-table change that upgrades to format version 4.
// When the table's current snapshot is a v1–v3 one it is converted
// (stageUpgrade); otherwise the change is staged as any other (c.Plain).
// Errors are those of a table commit, plus 400 ValidationException (reason
// not-convertible-to-v4) naming what cannot be converted.
func (m *Migrator) Upgrade(ctx context.Context, w *store.Warehouse, c *Change) (*Result, error) {
	var res *Result
	err := m.d.Engine.Run(ctx, w, "table", func(ctx context.Context) (*commitengine.Attempt, error) {
		a := &commitengine.Attempt{}
		var err error
		res, err = m.stageUpgrade(ctx, w, c, a)
		if err == nil && len(a.Swaps) > 0 {
			// The client's updates, not the converted snapshot's.
			a.Events = nil
			m.d.Tables.AddEvent(a, func() store.Event {
				return changeevents.Update(tableaccess.DocObject(w.Name, c.Ident, store.KindTable, res.Metadata), tableaccess.Who(ctx), c.RawUpdates, c.RawRequirements)
			})
		}
		return a, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// stageUpgrade stages one attempt of an upgrade commit into a.
func (m *Migrator) stageUpgrade(ctx context.Context, w *store.Warehouse, c *Change, a *commitengine.Attempt) (*Result, error) {
	obj, prev, err := m.d.Tables.ReadTable(ctx, w.Name, c.Ident)
	if err != nil {
		return nil, err
	}
	cur := prev.Meta.CurrentSnapshot()
	if cur == nil || (prev.Version == v4commits.FormatV4 && !v4read.LegacyManifestList(cur.ManifestList)) {
		return c.Plain(ctx, a)
	}
	if err := requirements.Check(c.Requirements, prev.Meta); err != nil {
		return nil, err
	}
	_, ups, err := v4commits.PlanUpdates(v4commits.FormatV4, false, c.Updates, c.Info)
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
	out, err := m.convertSnapshot(ctx, w, meta, cur)
	if err != nil {
		return nil, err
	}
	assigned := v4convert.AssignRowIDs(out, meta.NextRowID())
	// The upgraded view is not stored: its entry has no document to copy
	// snapshots from, so the new document encodes all of them.
	entry := &tablemeta.Entry{Meta: tablemeta.Hold(meta), Version: v4commits.FormatV4}
	st := v4commits.NewState(obj, entry)
	t := m.d.V4.NewTx(w, st, a)
	res, err := v4convert.Tree(t.Snapshot(), out, m.d.MaxLeafEntries, cur.SnapshotID)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "lay out the converted manifests")
	}
	res.AddedRows = assigned // next-row-id moves past the ids just assigned
	return v4Result(m.d.V4.StageSnapshot(ctx, t, res))
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
func (m *Migrator) convertSnapshot(ctx context.Context, w *store.Warehouse, meta table.Metadata, snap *table.Snapshot) (*v4convert.Output, error) {
	entries, err := m.liveEntries(ctx, w, meta, snap)
	if err != nil {
		return nil, err
	}
	out, err := v4convert.Convert(v4convert.Input{Schema: meta.CurrentSchema(), Specs: meta.PartitionSpecs(), Entries: entries})
	var ue *v4convert.UnsupportedError
	if errors.As(err, &ue) {
		name := ue.Example
		if v4manifest.IsAbsolute(name) || strings.HasPrefix(name, "/") {
			name = locations.FileName(w, meta.Location(), name) // never a server path
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
func (m *Migrator) liveEntries(ctx context.Context, w *store.Warehouse, meta table.Metadata, snap *table.Snapshot) ([]iceberg.ManifestEntry, error) {
	fs, err := m.d.Planner.IO(w, meta.Location())(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, upgradeReadErr(err, snap.SnapshotID)
	}
	var entries []iceberg.ManifestEntry
	for _, mf := range manifests {
		for e, err := range mf.Entries(fs, true) {
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
