package tablemeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"iter"
	"maps"
	"reflect"
	"slices"

	"github.com/apache/iceberg-go/table"
)

// iceberg-go keeps its metadata types unexported and copies the whole
// snapshot list (each snapshot's summary map included) on every
// Snapshots() call and in MetadataBuilderFromBase. On a table with a long
// history those copies were most of a commit. The service therefore holds
// table metadata as a doc: iceberg-go's metadata for everything but the
// snapshot list and snapshot log, and those two kept here, shared and never
// modified. Only iceberg-go's public API is used: a doc is a table.Metadata
// like any other, and the builder reads it through that interface.

// doc is table metadata whose snapshot list and snapshot log are the ones
// held here; the embedded metadata's own list and log may be shorter (a
// commit's doc embeds what the builder built on a light base) and are read
// only for what the embedded metadata holds itself. Nothing in a doc is
// modified once it is made.
type doc struct {
	table.Metadata
	snaps []table.Snapshot
	pos   map[int64]int // snapshot id → index in snaps
	log   []table.SnapshotLogEntry
}

// Hold returns m as the service keeps table metadata: with its snapshot
// list and log copied once and then shared, read without copies.
func Hold(m table.Metadata) table.Metadata { return hold(m) }

// hold is Hold as a doc.
func hold(m table.Metadata) *doc {
	if d, ok := m.(*doc); ok {
		return d
	}
	snaps := m.Snapshots()
	return &doc{Metadata: m, snaps: snaps[:len(snaps):len(snaps)], pos: positions(snaps, nil, 0), log: slices.Collect(m.SnapshotLogs())}
}

// positions indexes snaps[from:] into pos (a new map when nil).
func positions(snaps []table.Snapshot, pos map[int64]int, from int) map[int64]int {
	if pos == nil {
		pos = make(map[int64]int, len(snaps))
	}
	for i := from; i < len(snaps); i++ {
		if _, dup := pos[snaps[i].SnapshotID]; !dup {
			pos[snaps[i].SnapshotID] = i
		}
	}
	return pos
}

// Snapshots returns the doc's list itself, not a copy: callers only read it.
func (d *doc) Snapshots() []table.Snapshot { return d.snaps }

// SnapshotByID returns a copy of the snapshot with id, or nil.
func (d *doc) SnapshotByID(id int64) *table.Snapshot {
	i, ok := d.pos[id]
	if !ok {
		return nil
	}
	s := d.snaps[i]
	return &s
}

// SnapshotByName returns the snapshot a branch or tag points at, or nil.
func (d *doc) SnapshotByName(name string) *table.Snapshot {
	for n, r := range d.Refs() {
		if n == name {
			return d.SnapshotByID(r.SnapshotID)
		}
	}
	return nil
}

// CurrentSnapshot returns the current snapshot, or nil. The embedded
// metadata always holds it (a light base keeps it, and the builder adds a
// new one), so its id is read there.
func (d *doc) CurrentSnapshot() *table.Snapshot {
	cur := d.Metadata.CurrentSnapshot()
	if cur == nil {
		return nil
	}
	return d.SnapshotByID(cur.SnapshotID)
}

// SnapshotLogs yields the doc's snapshot log.
func (d *doc) SnapshotLogs() iter.Seq[table.SnapshotLogEntry] { return slices.Values(d.log) }

// Equals tells whether other holds the same metadata: the same encoding
// of everything but the snapshot list and log, the same snapshots in the
// same order, and the same log.
func (d *doc) Equals(other table.Metadata) bool {
	if other == nil {
		return false
	}
	if o, ok := other.(*doc); ok && o == d {
		return true
	}
	a, err1 := encodeShell(d, 0)
	b, err2 := encodeShell(other, 0)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		return false
	}
	return slices.EqualFunc(d.snaps, other.Snapshots(), func(a, b table.Snapshot) bool { return reflect.DeepEqual(a, b) }) &&
		slices.Equal(d.log, slices.Collect(other.SnapshotLogs()))
}

// MarshalJSON is iceberg-go's encoding of the document (format 1 to 3; a
// v4 table's doc is its v3 view), with the doc's snapshot list and log.
func (d *doc) MarshalJSON() ([]byte, error) {
	shell, err := encodeShell(d.Metadata, 0)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), shell[:len(shell)-1]...)
	if len(d.snaps) > 0 {
		out = append(out, `,"snapshots":[`...)
		for i := range d.snaps {
			if i > 0 {
				out = append(out, ',')
			}
			b, err := json.Marshal(d.snaps[i])
			if err != nil {
				return nil, err
			}
			out = append(out, b...)
		}
		out = append(out, ']')
	}
	return append(appendSnapshotLog(out, d), '}'), nil
}

// light returns d with only the snapshots whose ids are in want, and the
// last entry of its log (the builder checks a new snapshot's time against
// it), for the builder to start from without copying the history.
func (d *doc) light(want map[int64]bool) *doc {
	some := make([]table.Snapshot, 0, len(want))
	for i := range d.snaps {
		if want[d.snaps[i].SnapshotID] {
			some = append(some, d.snaps[i])
		}
	}
	return &doc{Metadata: d.Metadata, snaps: some[:len(some):len(some)], pos: positions(some, nil, 0), log: d.log[max(0, len(d.log)-1):]}
}

// splice is the doc of built, which the builder made from d.light: d's
// full list with the snapshots built appended, and d's log with the
// entries built appended. ok is false when built is not the light list
// (kept snapshots) followed by new snapshots, or its log does not extend
// the light log, which the builder then changed in a way the splice cannot
// follow (the caller builds on d itself).
func (d *doc) splice(built table.Metadata, kept int) (*doc, bool) {
	list := built.Snapshots()
	if len(list) < kept {
		return nil, false
	}
	full := make([]table.Snapshot, 0, len(d.snaps)+len(list)-kept)
	full = append(full, d.snaps...)
	for _, s := range list[kept:] {
		if _, dup := d.pos[s.SnapshotID]; dup {
			return nil, false
		}
		full = append(full, s)
	}
	log := slices.Collect(built.SnapshotLogs())
	base := d.log[:max(0, len(d.log)-1)]
	if len(d.log) > 0 && (len(log) == 0 || log[0] != d.log[len(d.log)-1]) {
		return nil, false
	}
	pos := make(map[int64]int, len(full))
	maps.Copy(pos, d.pos)
	return &doc{
		Metadata: built,
		snaps:    full[:len(full):len(full)],
		pos:      positions(full, pos, len(d.snaps)),
		log:      append(slices.Clip(base), log...),
	}, true
}

// encodeShell is iceberg-go's encoding of m without its snapshot list and
// snapshot log (removed from the top-level object), as format `version`
// (0: m's own). The document always ends in '}'.
func encodeShell(m table.Metadata, version int) ([]byte, error) {
	if d, ok := m.(*doc); ok {
		m = d.Metadata
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	shell, err := withoutKeys(data, "snapshots", "snapshot-log")
	if err != nil || version != FormatV4 {
		return shell, err
	}
	return marshalTableMetadataV4(shell)
}

// withoutKeys returns the JSON object data without the top-level members
// named keys (written without escapes), everything else byte for byte. It
// scans data once without decoding it: a commit runs it on every document
// it writes. data must be valid JSON (it is an encoder's output); an error
// says it is not an object.
func withoutKeys(data []byte, keys ...string) ([]byte, error) {
	bad := errors.New("metadata is not a JSON object")
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, bad
	}
	out := make([]byte, 0, len(data))
	out = append(out, '{')
	for i = skipSpace(data, i+1); i < len(data) && data[i] != '}'; {
		start := i
		keyEnd := valueEnd(data, i)
		if data[i] != '"' || keyEnd < 0 {
			return nil, bad
		}
		key := string(data[i+1 : keyEnd-1])
		j := skipSpace(data, keyEnd)
		if j >= len(data) || data[j] != ':' {
			return nil, bad
		}
		end := valueEnd(data, skipSpace(data, j+1))
		if end < 0 {
			return nil, bad
		}
		if !slices.Contains(keys, key) {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, data[start:end]...)
		}
		if i = skipSpace(data, end); i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if i >= len(data) {
		return nil, bad
	}
	return append(out, '}'), nil
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at i, or -1
// when data ends first.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	depth := 0
	for ; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if i >= len(data) {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the object or array holding a scalar
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	if depth == 0 {
		return i // a number, true, false or null at the end of data
	}
	return -1
}
