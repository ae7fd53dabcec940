package v4convert

import (
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/v4manifest"
)

// Summary keys of the conversion snapshot.
const (
	// SummaryConversion marks the snapshot that converted the table to
	// format version 4; its value is the snapshot id it converted.
	SummaryConversion = "v4-conversion-of-snapshot-id"
)

// Tree lays out a converted snapshot as a v4 manifest tree for snapshot
// snap: data rows in data leaves and equality-delete rows in delete leaves
// of at most maxLeaf rows each, referenced from root rows ADDED in snap.
// Leaf root rows carry no first_row_id: every converted data row keeps its
// own (explicit) one, so nothing is inherited. The operation is "replace"
// (same rows, new metadata); from is the snapshot converted. It fails only
// when the leaf stats cannot be aggregated (an internal fault).
func Tree(snap v4tree.Snapshot, out *Output, maxLeaf int, from int64) (*v4tree.Result, error) {
	if maxLeaf <= 0 {
		maxLeaf = 10_000
	}
	res := &v4tree.Result{Operation: table.OpReplace}
	add := func(content v4manifest.Content, rows []v4manifest.TrackedFile) error {
		for start := 0; start < len(rows); start += maxLeaf {
			chunk := rows[start:min(start+maxLeaf, len(rows))]
			row, err := leafRow(snap, chunk)
			if err != nil {
				return err
			}
			if content == v4manifest.ContentDeleteLeaf {
				row.ContentType = v4manifest.ContentDeleteManifest
			}
			res.Leaves = append(res.Leaves, v4tree.Leaf{Location: row.Location, Content: content, Rows: chunk, RootIndex: len(res.Root)})
			res.Root = append(res.Root, row)
		}
		return nil
	}
	if err := add(v4manifest.ContentDataLeaf, out.Data); err != nil {
		return nil, err
	}
	if err := add(v4manifest.ContentDeleteLeaf, out.EqualityDeletes); err != nil {
		return nil, err
	}
	res.Summary = summary(out, from)
	return res, nil
}

// leafRow is the root row of a new leaf (its size is set once written).
func leafRow(snap v4tree.Snapshot, rows []v4manifest.TrackedFile) (v4manifest.TrackedFile, error) {
	mi := v4manifest.ComputeManifestInfo(rows)
	stats, err := v4manifest.AggregateStats(rows)
	if err != nil {
		return v4manifest.TrackedFile{}, fmt.Errorf("aggregate leaf stats: %w", err)
	}
	return v4manifest.TrackedFile{
		Tracking: v4manifest.Tracking{Status: v4manifest.StatusAdded, SnapshotID: ptr(snap.ID),
			SequenceNumber: ptr(snap.SequenceNumber), FileSequenceNumber: ptr(snap.SequenceNumber)},
		ContentType: v4manifest.ContentDataManifest, FormatVersion: formatV4, Location: snap.LeafLocation(),
		FileFormat: "parquet", RecordCount: int64(len(rows)), ManifestInfo: &mi, ContentStats: stats,
	}, nil
}

// summary is the conversion snapshot's summary: no file is added or
// removed, the totals are those of the converted snapshot's live files,
// counted as v4tree counts them (a deletion vector is a delete file of
// its blob's size).
func summary(out *Output, from int64) iceberg.Properties {
	rows := make([]v4manifest.TrackedFile, 0, len(out.Data)+len(out.EqualityDeletes))
	rows = append(append(rows, out.Data...), out.EqualityDeletes...)
	props := iceberg.Properties{SummaryConversion: strconv.FormatInt(from, 10), "changed-partition-count": "0"}
	for k, v := range v4tree.Totals(rows) {
		props[k] = strconv.FormatInt(v, 10)
	}
	return props
}
