// Package v4convert turns the live manifest entries of a format v1–v3
// snapshot (as iceberg-go reads them from Avro manifests) into v4 manifest
// rows, for the upgrade of a table with snapshots to format version 4.
//
// It is pure: entries and the table's schema and specs go in, TrackedFile
// rows (and the manifest tree holding them) come out. Everything a v4 row
// can express is carried exactly: location, format, spec and partition,
// counts and size, typed stats, sort order, key metadata, split offsets,
// first_row_id, the entry's snapshot id and data/file sequence numbers, and
// v3 deletion vectors, which move onto the data row they reference.
// Positional delete files (not deletion vectors) have no v4 form: Convert
// refuses them with an *UnsupportedError.
package v4convert

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakehold/catalog/v4manifest"
)

// Input is one snapshot's live entries and the table they belong to.
type Input struct {
	// Schema types the stats bounds (the table's current schema: the v4
	// manifest writer types content_stats from it).
	Schema *iceberg.Schema
	// Specs are all partition specs of the table.
	Specs []iceberg.PartitionSpec
	// Entries are the snapshot's live entries (ADDED and EXISTING), data
	// and delete manifests alike, with sequence numbers and first_row_id
	// already inherited (iceberg-go does this when it reads entries).
	Entries []iceberg.ManifestEntry
}

// Output is the converted snapshot.
type Output struct {
	// Data are the data rows (status EXISTING), each with its deletion
	// vector when it had one, in entry order.
	Data []v4manifest.TrackedFile
	// EqualityDeletes are the equality-delete rows (status EXISTING).
	EqualityDeletes []v4manifest.TrackedFile
	// DeletionVectors counts the v3 deletion vectors moved onto data rows;
	// DeletedRows sums their cardinalities.
	DeletionVectors int
	DeletedRows     int64
	// DanglingDVs counts deletion vectors whose data file is not live in
	// the snapshot: they delete nothing and are not carried.
	DanglingDVs int
	// Records sums the data rows' record counts.
	Records int64
}

// UnsupportedError is a snapshot that cannot be expressed in v4.
type UnsupportedError struct {
	// What names the kind of file, e.g. "position delete files".
	What string
	// Count is how many such files the snapshot has; Example is the
	// location (as in the manifest) of one of them, or, for a partition
	// spec, "spec N field NAME".
	Count   int
	Example string
	// Hint tells the user what to do first.
	Hint string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%d %s cannot be converted to format version 4 (e.g. %s)", e.Count, e.What, e.Example)
}

// Convert converts a snapshot's live entries. It returns *UnsupportedError
// for position delete files, two deletion vectors on one data file, a
// deletion vector without its referenced file or blob range, or a
// partition value or spec the v4 manifest cannot hold.
func Convert(in Input) (*Output, error) {
	specs := map[int32]*specTypes{}
	for _, sp := range in.Specs {
		st, err := newSpecTypes(in.Schema, sp)
		if err != nil {
			return nil, err
		}
		specs[int32(sp.ID())] = st
	}
	stats := newStatsTypes(in.Schema)
	out := &Output{}
	dvs := map[string]dvRow{}
	var posDeletes []string
	for _, e := range in.Entries {
		df := e.DataFile()
		switch {
		case df.ContentType() == iceberg.EntryContentData:
			row, err := dataRow(e, specs, stats)
			if err != nil {
				return nil, err
			}
			out.Data = append(out.Data, row)
			out.Records += row.RecordCount
		case df.ContentType() == iceberg.EntryContentEqDeletes:
			row, err := equalityDeleteRow(e, specs, stats)
			if err != nil {
				return nil, err
			}
			out.EqualityDeletes = append(out.EqualityDeletes, row)
		case df.FileFormat() == iceberg.PuffinFile:
			if err := addDV(dvs, e); err != nil {
				return nil, err
			}
		default:
			posDeletes = append(posDeletes, df.FilePath())
		}
	}
	if len(posDeletes) > 0 {
		return nil, &UnsupportedError{What: "position delete files", Count: len(posDeletes), Example: posDeletes[0],
			Hint: "apply them first: rewrite the data files they delete from (Spark: rewrite_data_files with delete-file-threshold 1), " +
				"or, on a v3 table, turn them into deletion vectors (Spark: rewrite_position_delete_files)"}
	}
	attachDVs(out, dvs)
	return out, nil
}

// dvRow is a v3 deletion vector waiting for its data row.
type dvRow struct {
	dv     v4manifest.DeletionVector
	snapID int64
}

// addDV records a v3 deletion vector entry under the data file it
// references.
func addDV(dvs map[string]dvRow, e iceberg.ManifestEntry) error {
	df := e.DataFile()
	ref, off, size := df.ReferencedDataFile(), df.ContentOffset(), df.ContentSizeInBytes()
	if ref == nil || off == nil || size == nil {
		return &UnsupportedError{What: "deletion vectors without referenced-data-file, content-offset or content-size-in-bytes",
			Count: 1, Example: df.FilePath(), Hint: "rewrite the table's deletes first"}
	}
	if _, dup := dvs[*ref]; dup {
		return &UnsupportedError{What: "data files with two deletion vectors", Count: 1, Example: *ref,
			Hint: "a v3 data file has at most one deletion vector; repair the table first"}
	}
	dvs[*ref] = dvRow{snapID: e.SnapshotID(), dv: v4manifest.DeletionVector{Location: df.FilePath(), Offset: *off,
		SizeInBytes: *size, Cardinality: df.Count(), KeyMetadata: cloneBytes(df.KeyMetadata())}}
	return nil
}

// attachDVs puts each deletion vector on its data row; the rest dangle.
func attachDVs(out *Output, dvs map[string]dvRow) {
	for i := range out.Data {
		r := &out.Data[i]
		d, ok := dvs[r.Location]
		if !ok {
			continue
		}
		delete(dvs, r.Location)
		dv := d.dv
		r.DeletionVector = &dv
		r.Tracking.DVSnapshotID = ptr(d.snapID)
		out.DeletionVectors++
		out.DeletedRows += dv.Cardinality
	}
	out.DanglingDVs = len(dvs)
}

// formatV4 is the format version of converted rows: they are v4 rows.
const formatV4 = 4

// baseRow converts what data and equality-delete entries share.
func baseRow(e iceberg.ManifestEntry, specs map[int32]*specTypes, stats statsTypes) (v4manifest.TrackedFile, error) {
	df := e.DataFile()
	st, ok := specs[df.SpecID()]
	if !ok {
		return v4manifest.TrackedFile{}, &UnsupportedError{What: "files of an unknown partition spec", Count: 1,
			Example: df.FilePath(), Hint: fmt.Sprintf("spec %d is not in the table metadata", df.SpecID())}
	}
	part, err := st.values(df)
	if err != nil {
		return v4manifest.TrackedFile{}, err
	}
	seq := e.SequenceNum()
	fileSeq := seq
	if fs := e.FileSequenceNum(); fs != nil {
		fileSeq = *fs
	}
	row := v4manifest.TrackedFile{
		Tracking: v4manifest.Tracking{Status: v4manifest.StatusExisting, SnapshotID: ptr(e.SnapshotID()),
			SequenceNumber: ptr(seq), FileSequenceNumber: ptr(fileSeq)},
		FormatVersion: formatV4, Location: df.FilePath(), FileFormat: strings.ToLower(string(df.FileFormat())),
		RecordCount: df.Count(), FileSizeInBytes: df.FileSizeBytes(), SpecID: ptr(df.SpecID()), Partition: part,
		ContentStats: stats.convert(df), KeyMetadata: cloneBytes(df.KeyMetadata()),
	}
	if so := df.SplitOffsets(); len(so) > 0 {
		row.SplitOffsets = append([]int64(nil), so...)
	}
	return row, nil
}

// dataRow converts a data file entry.
func dataRow(e iceberg.ManifestEntry, specs map[int32]*specTypes, stats statsTypes) (v4manifest.TrackedFile, error) {
	row, err := baseRow(e, specs, stats)
	if err != nil {
		return row, err
	}
	df := e.DataFile()
	row.ContentType = v4manifest.ContentData
	if id := df.SortOrderID(); id != nil {
		row.SortOrderID = ptr(int32(*id))
	}
	if f := df.FirstRowID(); f != nil {
		row.Tracking.FirstRowID = ptr(*f)
	}
	return row, nil
}

// equalityDeleteRow converts an equality-delete file entry.
func equalityDeleteRow(e iceberg.ManifestEntry, specs map[int32]*specTypes, stats statsTypes) (v4manifest.TrackedFile, error) {
	row, err := baseRow(e, specs, stats)
	if err != nil {
		return row, err
	}
	row.ContentType = v4manifest.ContentEqualityDeletes
	ids := e.DataFile().EqualityFieldIDs()
	if len(ids) == 0 {
		return row, &UnsupportedError{What: "equality delete files without equality ids", Count: 1, Example: row.Location,
			Hint: "rewrite the table's deletes first"}
	}
	for _, id := range ids {
		row.EqualityIDs = append(row.EqualityIDs, int32(id))
	}
	return row, nil
}

func ptr[T any](v T) *T { return &v }

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}
