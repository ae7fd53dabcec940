package tablemeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go/table"
)

// The commit fast path. A commit on a table with a long history changes a
// few keys and appends to the snapshot list; re-encoding every snapshot
// (and re-parsing the result) made its cost grow with history. Instead the
// new document is iceberg-go's own encoding of everything except the
// snapshot list and snapshot log (the "shell", small), with the snapshot
// list spliced in: snapshots the previous document already held are copied
// byte for byte, new ones are encoded by iceberg-go. The snapshot log is a
// list of two integers per entry and is written directly.
//
// The metadata is a doc (tabledoc.go), whose snapshot list is read
// without copying; anything else takes the slow path.

// Encoded is a metadata document written by Encode: the document,
// where each snapshot lies in it, the refs-only document (snapshots that
// head no branch or tag left out; data itself when none is), and the
// document to read back as the serialisation check (the refs-only one,
// plus the snapshots this commit encoded, with only the metadata-log
// entries the previous document did not hold).
type Encoded struct {
	Data, Refs, Check []byte
	Spans             [][2]int
	Shell             []byte // the encoding of everything else, as written
	Version           int

	checkShell []byte                   // Shell without its metadata-log
	newLog     []table.MetadataLogEntry // the metadata-log entries Check holds
}

// Encode writes meta as format version `version`, copying the bytes of
// every snapshot found unchanged in prev (nil: encode all). ok is false
// when meta does not have the shape the fast path needs.
func Encode(meta table.Metadata, version int, prev *Entry) (out *Encoded, ok bool, err error) {
	d := hold(meta)
	snaps := d.snaps
	shell, err := encodeShell(d, version)
	if err != nil || len(shell) < 2 || shell[len(shell)-1] != '}' {
		return nil, false, err
	}
	heads := map[int64]bool{}
	for _, r := range meta.Refs() {
		heads[r.SnapshotID] = true
	}
	var old idWalk
	if prev != nil && prev.Spans != nil {
		old.snaps = prev.Meta.Snapshots()
	}
	out = &Encoded{Spans: make([][2]int, len(snaps)), Shell: shell, Version: version}
	data := make([]byte, 0, len(shell)+snapshotsSizeHint(prev, len(snaps)))
	data = append(data, shell[:len(shell)-1]...)
	prefix := len(data)
	var kept, checked []byte // the snapshots of refs and of check, comma-separated
	nKept := 0
	if len(snaps) > 0 {
		data = append(data, `,"snapshots":[`...)
	}
	for i := range snaps {
		s := &snaps[i]
		if i > 0 {
			data = append(data, ',')
		}
		start, fresh := len(data), false
		if j := old.find(s.SnapshotID); j >= 0 && sameSnapshot(&old.snaps[j], s) {
			data = append(data, prev.Data[prev.Spans[j][0]:prev.Spans[j][1]]...)
		} else {
			b, err := encodeSnapshot(s, version)
			if err != nil {
				return nil, false, err
			}
			data, fresh = append(data, b...), true
		}
		out.Spans[i] = [2]int{start, len(data)}
		if heads[s.SnapshotID] {
			kept, nKept = appendItem(kept, data[start:]), nKept+1
		}
		if heads[s.SnapshotID] || fresh {
			checked = appendItem(checked, data[start:])
		}
	}
	if len(snaps) > 0 {
		data = append(data, ']')
	}
	tail := append(appendSnapshotLog(nil, meta), '}')
	data = append(data, tail...)
	out.Data = data
	out.Refs = data // every snapshot heads a branch or tag: nothing dropped
	if nKept < len(snaps) {
		out.Refs = withSnapshots(data[:prefix], kept, true, tail)
	}
	if out.checkShell, err = withoutKeys(shell, "metadata-log"); err != nil {
		return nil, false, err
	}
	out.newLog = newLogEntries(prev, meta)
	checkPrefix, err := withLog(out.checkShell, out.newLog)
	if err != nil {
		return nil, false, err
	}
	out.Check = withSnapshots(checkPrefix, checked, len(snaps) > 0, tail)
	return out, true, nil
}

// newLogEntries are the entries of meta's metadata log that prev's does
// not hold (all of them without prev). A much-committed table carries a
// hundred entries (write.metadata.previous-versions-max), most of the
// document's shell; a commit adds one. The others were read from the
// previous document, so, as for copied snapshots, the check reads back
// only the new ones.
func newLogEntries(prev *Entry, meta table.Metadata) []table.MetadataLogEntry {
	old := map[table.MetadataLogEntry]bool{}
	if prev != nil {
		for e := range prev.Meta.PreviousFiles() {
			old[e] = true
		}
	}
	var out []table.MetadataLogEntry
	for e := range meta.PreviousFiles() {
		if !old[e] {
			out = append(out, e)
		}
	}
	return out
}

// withLog is shell (an object ending in '}') without its closing brace,
// with a metadata-log of entries when there are any.
func withLog(shell []byte, entries []table.MetadataLogEntry) ([]byte, error) {
	out := slices.Clone(shell[:len(shell)-1])
	if len(entries) == 0 {
		return out, nil
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return nil, err
	}
	if len(out) > 1 {
		out = append(out, ',')
	}
	return append(append(out, `"metadata-log":`...), b...), nil
}

// snapshotsSizeHint guesses the size of the snapshot list from the previous
// document, to allocate the new one once.
func snapshotsSizeHint(prev *Entry, n int) int {
	if prev == nil {
		return 512 * n
	}
	return len(prev.Data) + 16<<10
}

// idWalk finds snapshots by id in a list, cheaply when they are looked up
// in list order (a commit keeps the previous snapshots in order); an index
// is built only on a miss before the end of the list. Past the end with no
// index, find answers -1 without looking: the snapshots there are the ones
// a commit appends, and a wrong -1 only costs an encoding (or a check).
type idWalk struct {
	snaps []table.Snapshot
	next  int
	byID  map[int64]int
}

// find returns the index of the snapshot with id, or -1.
func (w *idWalk) find(id int64) int {
	if w.next < len(w.snaps) && w.snaps[w.next].SnapshotID == id {
		w.next++
		return w.next - 1
	}
	if w.byID == nil && w.next >= len(w.snaps) {
		return -1
	}
	if w.byID == nil {
		w.byID = make(map[int64]int, len(w.snaps))
		for i := range w.snaps {
			w.byID[w.snaps[i].SnapshotID] = i
		}
	}
	i, ok := w.byID[id]
	if !ok {
		return -1
	}
	w.next = i + 1
	return i
}

// appendItem appends one element to a comma-separated list.
func appendItem(list, item []byte) []byte {
	if len(list) > 0 {
		list = append(list, ',')
	}
	return append(list, item...)
}

// withSnapshots assembles a document from the shell prefix, a snapshot list
// (present: written even when empty, as refsOnly keeps the key) and the
// tail.
func withSnapshots(prefix, items []byte, present bool, tail []byte) []byte {
	out := make([]byte, 0, len(prefix)+len(items)+len(tail)+16)
	out = append(out, prefix...)
	if present {
		out = append(append(append(out, `,"snapshots":[`...), items...), ']')
	}
	return append(out, tail...)
}

// marshalTableMetadataV4 turns a v3 encoding into the v4 one.
func marshalTableMetadataV4(v3 []byte) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(v3, &doc); err != nil {
		return nil, err
	}
	if _, ok := doc["snapshots"]; ok {
		return nil, errors.New("v4 shell with snapshots")
	}
	doc["format-version"] = json.RawMessage("4")
	if _, ok := doc["next-row-id"]; !ok {
		doc["next-row-id"] = json.RawMessage("0")
	}
	return json.Marshal(doc)
}

// encodeSnapshot is iceberg-go's encoding of s; for format 4 the manifest
// list is named root-manifest. The first "manifest-list" key of the object
// is the field: the fields iceberg-go writes before it are all numbers.
func encodeSnapshot(s *table.Snapshot, version int) ([]byte, error) {
	b, err := json.Marshal(*s)
	if err != nil || version != FormatV4 {
		return b, err
	}
	const from, to = `"manifest-list":`, `"root-manifest":`
	if i := bytes.Index(b, []byte(from)); i > 0 {
		b = append(b[:i:i], append([]byte(to), b[i+len(from):]...)...)
	}
	return b, nil
}

// sameSnapshot tells whether the snapshot the previous document held under
// an id is the one meta holds: ids are never reused, so this only guards
// against a remove-and-re-add within one commit.
func sameSnapshot(a, b *table.Snapshot) bool {
	return a.SnapshotID == b.SnapshotID && a.SequenceNumber == b.SequenceNumber &&
		a.TimestampMs == b.TimestampMs && a.ManifestList == b.ManifestList &&
		eqPtr(a.ParentSnapshotID, b.ParentSnapshotID) && eqPtr(a.SchemaID, b.SchemaID) &&
		eqPtr(a.FirstRowID, b.FirstRowID) && eqPtr(a.AddedRows, b.AddedRows) &&
		len(a.ManifestLocations) == len(b.ManifestLocations) && (a.Summary == nil) == (b.Summary == nil) &&
		(a.Summary == nil || a.Summary.Operation == b.Summary.Operation && len(a.Summary.Properties) == len(b.Summary.Properties))
}

// eqPtr tells whether two optional values are both absent or equal.
func eqPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// appendSnapshotLog writes `,"snapshot-log":[...]` as encoding/json would
// (omitted when empty).
func appendSnapshotLog(out []byte, meta table.Metadata) []byte {
	n := 0
	for e := range meta.SnapshotLogs() {
		if n == 0 {
			out = append(out, `,"snapshot-log":[`...)
		} else {
			out = append(out, ',')
		}
		out = append(out, `{"snapshot-id":`...)
		out = strconv.AppendInt(out, e.SnapshotID, 10)
		out = append(out, `,"timestamp-ms":`...)
		out = strconv.AppendInt(out, e.TimestampMs, 10)
		out = append(out, '}')
		n++
	}
	if n > 0 {
		out = append(out, ']')
	}
	return out
}

// snapshotSpans locates each snapshot of snaps, the parsed snapshot list
// of data, in data; nil when the list in data is not snaps, in order.
func snapshotSpans(data []byte, snaps []table.Snapshot) [][2]int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var list snapshotList
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key == "snapshots" {
			if list, err = scanSnapshots(dec, data); err != nil {
				return nil
			}
			continue
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	if len(list.items) != len(snaps) {
		return nil
	}
	spans := make([][2]int, len(snaps))
	for i, it := range list.items {
		if it.id != snaps[i].SnapshotID {
			return nil
		}
		spans[i] = [2]int{it.from, it.to}
	}
	return spans
}

// AddedView is next with only the snapshots base does not hold, for the
// location check of a commit: kept snapshots passed it when they were
// committed against the same table location. When the location moves,
// every snapshot is checked again.
func AddedView(base, next table.Metadata) table.Metadata {
	if base == nil || base.Location() != next.Location() {
		return next
	}
	old := idWalk{snaps: base.Snapshots()}
	var added []table.Snapshot
	for _, sn := range next.Snapshots() {
		if old.find(sn.SnapshotID) < 0 {
			added = append(added, sn)
		}
	}
	return &doc{Metadata: next, snaps: added, pos: positions(added, nil, 0), log: slices.Collect(next.SnapshotLogs())}
}
