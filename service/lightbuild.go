package service

import (
	"maps"
	"reflect"
	"unsafe"

	"github.com/apache/iceberg-go/table"
	"github.com/lakehold/catalog/internal/fault"
)

// Building a commit's metadata without copying the history. iceberg-go's
// MetadataBuilderFromBase deep-copies every snapshot (and its summary map)
// of the base; on a table with 10k snapshots that copy was a sixth of a
// commit. Most commits (appends, property changes, schema changes) touch
// only the snapshots that refs point at, so the builder is given a base
// whose snapshot list holds just those ("light"), and the untouched
// snapshots are spliced back in front of whatever the builder appended.
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
// statistics updates), and the number of them; ok is false when ups (raw
// is their JSON) need the whole list or base does not have the shape the
// fast path relies on.
func lightBase(base table.Metadata, ups table.Updates, refs []updateInfo) (light table.Metadata, kept int, ok bool) {
	e, ok := metaStruct(base)
	if !ok {
		return nil, 0, false
	}
	if len(refs) != len(ups) {
		return nil, 0, false
	}
	want := map[int64]bool{}
	for _, r := range base.Refs() {
		want[r.SnapshotID] = true
	}
	if cur := base.CurrentSnapshot(); cur != nil {
		want[cur.SnapshotID] = true
	}
	adds, mainMoves := 0, 0
	for i, r := range refs {
		if !lightActions[r.Action] || ups[i].Action() != r.Action {
			return nil, 0, false
		}
		switch {
		case r.Action == "add-snapshot":
			if r.Snapshot == nil || base.SnapshotByID(r.Snapshot.SnapshotID) != nil {
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
	all := e.FieldByName("SnapshotList").Interface().([]table.Snapshot)
	some := make([]table.Snapshot, 0, len(want))
	for i := range all {
		if want[all[i].SnapshotID] {
			some = append(some, all[i])
		}
	}
	cp := reflect.New(e.Type())
	cp.Elem().Set(e) // a shallow copy: only its snapshot list differs
	cp.Elem().FieldByName("SnapshotList").Set(reflect.ValueOf(some))
	light, ok = cp.Interface().(table.Metadata)
	return light, len(some), ok
}

// spliceSnapshots puts the full snapshot list of base back into meta,
// built on base's light form (which kept `kept` snapshots): meta's list
// must be the light list followed by the snapshots the commit added. ok is
// false when it is not (the caller then builds on the full base).
func spliceSnapshots(meta, base table.Metadata, kept int) (table.Metadata, bool) {
	me, ok := metaStruct(meta)
	if !ok {
		return nil, false
	}
	built := me.FieldByName("SnapshotList").Interface().([]table.Snapshot)
	all := sharedSnapshots(base)
	if len(built) < kept {
		return nil, false
	}
	full := make([]table.Snapshot, 0, len(all)+len(built)-kept)
	full = append(full, all...)
	for i := kept; i < len(built); i++ {
		if base.SnapshotByID(built[i].SnapshotID) != nil {
			return nil, false
		}
		full = append(full, built[i])
	}
	me.FieldByName("SnapshotList").Set(reflect.ValueOf(full))
	setSnapshotIndex(me, base, full)
	return meta, true
}

// setSnapshotIndex replaces the snapshot index of the metadata struct e
// (built by the builder for the light list) with one for full, which
// extends base's list. Without it the index no longer matches the list and
// iceberg-go rebuilds it, from scratch, on every snapshot lookup (each a
// 10k-entry map on a long history). The index type is unexported, so its
// fields are set through reflection; when its shape is not the expected
// one the stale index is left (lookups stay correct, only slower).
func setSnapshotIndex(e reflect.Value, base table.Metadata, full []table.Snapshot) {
	f := e.FieldByName("snapshotIndex")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.Type().Elem().Kind() != reflect.Struct {
		return
	}
	idx := reflect.New(f.Type().Elem()).Elem()
	posF, firstF := idx.FieldByName("positions"), idx.FieldByName("firstSnapshot")
	if !posF.IsValid() || posF.Type() != reflect.TypeOf(map[int64]int(nil)) ||
		!firstF.IsValid() || firstF.Type() != reflect.TypeOf((*table.Snapshot)(nil)) || len(full) == 0 {
		return
	}
	pos := basePositions(base, full)
	writable(posF).Set(reflect.ValueOf(pos))
	writable(firstF).Set(reflect.ValueOf(&full[0]))
	writable(f).Set(idx.Addr())
}

// basePositions maps each snapshot id of full to its position: base's own
// index copied when it is current (base's list is full's prefix), plus the
// added snapshots.
func basePositions(base table.Metadata, full []table.Snapshot) map[int64]int {
	var pos map[int64]int
	n := 0
	if be, ok := metaStruct(base); ok {
		if f := be.FieldByName("snapshotIndex"); f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() {
			p, first := f.Elem().FieldByName("positions"), f.Elem().FieldByName("firstSnapshot")
			if p.IsValid() && p.Type() == reflect.TypeOf(map[int64]int(nil)) && first.IsValid() && first.Type() == reflect.TypeOf((*table.Snapshot)(nil)) {
				old := writable(p).Interface().(map[int64]int)
				list := sharedSnapshots(base)
				n = len(list)
				// Current: built for this very list (iceberg-go's own test).
				if len(old) == n && n > 0 && n <= len(full) && writable(first).Interface().(*table.Snapshot) == &list[0] {
					pos = make(map[int64]int, len(full))
					maps.Copy(pos, old)
				}
			}
		}
	}
	if pos == nil {
		pos, n = make(map[int64]int, len(full)), 0
	}
	for i := n; i < len(full); i++ {
		if _, dup := pos[full[i].SnapshotID]; !dup {
			pos[full[i].SnapshotID] = i
		}
	}
	return pos
}

// writable is v (an addressable field, maybe unexported) as a settable value.
func writable(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// buildChange applies ups (raw is their JSON) to prev's metadata, stored at
// loc, and builds the result; upgrade says the commit also changes the
// format version, which by itself is a change. changed is false (and meta
// is prev's) when nothing changed. Errors are service errors: 400
// IllegalArgument for updates the builder refuses.
func buildChange(prev *metaEntry, loc string, upgrade bool, ups table.Updates, info []updateInfo) (meta table.Metadata, changed bool, err error) {
	if light, kept, ok := lightBase(prev.meta, ups, info); ok {
		meta, changed, err := buildOn(light, prev.meta, loc, upgrade, ups)
		if err == nil && !changed {
			return prev.meta, false, nil
		}
		if err == nil {
			if full, ok := spliceSnapshots(meta, prev.meta, kept); ok {
				return full, true, nil
			}
		}
	}
	meta, changed, err = buildOn(prev.meta, prev.meta, loc, upgrade, ups)
	if err == nil && !changed {
		return prev.meta, false, nil
	}
	return meta, changed, err
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
