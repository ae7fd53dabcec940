package tablemeta

import (
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
)

// Building a commit's metadata without copying the history. iceberg-go's
// MetadataBuilderFromBase deep-copies every snapshot (and its summary map)
// of the base; on a table with 10k snapshots that copy was a sixth of a
// commit. Most commits (appends, property changes, schema changes) touch
// only the snapshots that refs point at, so the builder is given a base
// whose snapshot list holds just those and whose log holds its last entry
// (a light doc), and the untouched snapshots and log entries are spliced
// back in front of whatever the builder appended (doc.splice).
//
// This is sound only for updates whose builder logic reads the snapshot
// list for snapshots the light list holds. lightBase admits a whitelist of
// update kinds and gives up (the caller builds on the full base) whenever
// the builder's snapshot-log pruning could run (remove-snapshots, a main
// branch moved twice) or an added snapshot id already exists (the full
// builder then produces its own error). Any failure on the light base is
// retried on the full base, so errors read exactly as before.

// lightActions are the updates the light base supports.
var lightActions = map[string]bool{
	"set-properties": true, "remove-properties": true, "add-snapshot": true,
	"set-snapshot-ref": true, "remove-snapshot-ref": true, "set-location": true,
	"add-schema": true, "set-current-schema": true, "add-spec": true,
	"set-default-spec": true, "add-sort-order": true, "set-default-sort-order": true,
	"set-statistics": true, "remove-statistics": true,
	"set-partition-statistics": true, "remove-partition-statistics": true,
}

// lightBase returns base with only the snapshots ups can touch (the
// current one, the heads of refs, the targets of set-snapshot-ref and
// statistics updates), and the number of them; ok is false when ups (refs
// is what was read of them) need the whole list or base is not a doc.
func lightBase(base table.Metadata, ups table.Updates, refs []UpdateInfo) (light *doc, kept int, ok bool) {
	d, ok := base.(*doc)
	if !ok || len(refs) != len(ups) {
		return nil, 0, false
	}
	want := map[int64]bool{}
	for _, r := range d.Refs() {
		want[r.SnapshotID] = true
	}
	if cur := d.CurrentSnapshot(); cur != nil {
		want[cur.SnapshotID] = true
	}
	adds, mainMoves := 0, 0
	for i, r := range refs {
		if !lightActions[r.Action] || ups[i].Action() != r.Action {
			return nil, 0, false
		}
		switch {
		case r.Action == "add-snapshot":
			if r.Snapshot == nil || d.SnapshotByID(r.Snapshot.SnapshotID) != nil {
				return nil, 0, false
			}
			adds++
		case r.Action == "set-snapshot-ref" && r.RefName == table.MainBranch:
			mainMoves++
		}
		if r.SnapshotID != nil {
			want[*r.SnapshotID] = true
		}
	}
	// Two added snapshots or two moves of main can make the builder prune
	// the snapshot log against its (light) snapshot list.
	if adds > 1 || mainMoves > 1 {
		return nil, 0, false
	}
	light = d.light(want)
	return light, len(light.snaps), true
}

// Build applies ups (raw is their JSON) to prev's metadata, stored at
// loc, and builds the result; upgrade says the commit also changes the
// format version, which by itself is a change. changed is false (and meta
// is prev's) when nothing changed. Errors are service errors: 400
// IllegalArgument for updates the builder refuses.
func Build(prev *Entry, loc string, upgrade bool, ups table.Updates, info []UpdateInfo) (meta table.Metadata, changed bool, err error) {
	if light, kept, ok := lightBase(prev.Meta, ups, info); ok {
		meta, changed, err := buildOn(light, prev.Meta, loc, upgrade, ups)
		if err == nil && !changed {
			return prev.Meta, false, nil
		}
		if err == nil {
			if full, ok := prev.Meta.(*doc).splice(meta, kept); ok {
				return full, true, nil
			}
		}
	}
	meta, changed, err = buildOn(prev.Meta, prev.Meta, loc, upgrade, ups)
	if err == nil && !changed {
		return prev.Meta, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return Hold(meta), true, nil
}

// buildOn is one build of ups on base (prev's metadata or its light form).
func buildOn(base, prev table.Metadata, loc string, upgrade bool, ups table.Updates) (table.Metadata, bool, error) {
	b, err := table.MetadataBuilderFromBase(base, loc)
	if err != nil {
		return nil, false, fault.Wrap(fault.Internal, err, "metadata builder")
	}
	for _, u := range ups {
		if err := u.Apply(b); err != nil {
			return nil, false, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
		}
	}
	if upgrade && !b.HasChanges() {
		// The upgrade alone is a change: log the file it replaces, as the
		// builder does for its own updates.
		b.AppendMetadataLog(table.MetadataLogEntry{MetadataFile: loc, TimestampMs: prev.LastUpdatedMillis()})
	}
	if !b.HasChanges() && !upgrade {
		return nil, false, nil
	}
	meta, err := b.Build()
	if err != nil {
		return nil, false, fault.Wrap(fault.IllegalArgument, err, "%s", fault.ClientText(err))
	}
	return meta, true, nil
}
