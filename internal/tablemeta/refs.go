package tablemeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// RefsDocument is what the store keeps beside a table's metadata for
// snapshots=refs loads: data itself when every snapshot of meta (the
// metadata data encodes) heads a branch or tag — the common case, found
// without touching the JSON — else RefsOnly(data); nil when that fails
// (loads then filter the full document).
func RefsDocument(meta table.Metadata, data []byte) []byte {
	heads := map[int64]bool{}
	for _, r := range meta.Refs() {
		heads[r.SnapshotID] = true
	}
	for _, sn := range meta.Snapshots() {
		if !heads[sn.SnapshotID] {
			out, err := RefsOnly(data)
			if err != nil {
				return nil
			}
			return out
		}
	}
	return data
}

// RefsOnly drops every snapshot that is not the head of a branch or tag.
// It splices the snapshot list inside the JSON, so that everything else is
// served byte-for-byte, and returns data itself when nothing is dropped.
// One streaming pass: commits of tables with long histories derive it too.
func RefsOnly(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("metadata is not a JSON object: %v", err)
	}
	heads := map[int64]bool{}
	var list snapshotList
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch key {
		case "refs":
			var refs map[string]struct {
				SnapshotID int64 `json:"snapshot-id"`
			}
			if err := dec.Decode(&refs); err != nil {
				return nil, err
			}
			heads = map[int64]bool{} // the last "refs" wins, as in encoding/json
			for _, r := range refs {
				heads[r.SnapshotID] = true
			}
		case "snapshots":
			if list, err = scanSnapshots(dec, data); err != nil {
				return nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, fmt.Errorf("metadata is not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("metadata has data after its JSON object")
	}
	kept, n := make([]byte, 0, 1024), 0
	for _, sn := range list.items {
		if heads[sn.id] {
			if n++; n > 1 {
				kept = append(kept, ',')
			}
			kept = append(kept, data[sn.from:sn.to]...)
		}
	}
	if n == len(list.items) {
		return data, nil // nothing dropped (or no snapshot list)
	}
	out := make([]byte, 0, list.start+len(kept)+2+len(data)-list.end)
	out = append(append(append(out, data[:list.start]...), '['), kept...)
	return append(append(out, ']'), data[list.end:]...), nil
}

// snapshotList locates a metadata document's snapshot array: its bytes
// data[start:end] (start -1 when absent or null) and each snapshot's id and
// bytes.
type snapshotList struct {
	start, end int
	items      []struct {
		id       int64
		from, to int
	}
}

// scanSnapshots reads the value of "snapshots" from dec, which decodes
// data, recording where each snapshot lies.
func scanSnapshots(dec *json.Decoder, data []byte) (snapshotList, error) {
	l := snapshotList{start: -1}
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return l, err
	}
	if tok != json.Delim('[') {
		return l, errors.New("snapshots is not a list")
	}
	l.start = int(dec.InputOffset()) - 1
	for dec.More() {
		from := int(dec.InputOffset())
		for from < len(data) && strings.IndexByte(" \t\r\n,", data[from]) >= 0 {
			from++ // the separator before this element
		}
		var sn struct {
			SnapshotID int64 `json:"snapshot-id"`
		}
		if err := dec.Decode(&sn); err != nil {
			return l, err
		}
		l.items = append(l.items, struct {
			id       int64
			from, to int
		}{sn.SnapshotID, from, int(dec.InputOffset())})
	}
	if _, err := dec.Token(); err != nil {
		return l, err
	}
	l.end = int(dec.InputOffset())
	return l, nil
}
