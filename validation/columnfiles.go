// Package validation checks column-file commits against a v4 table. It is
// pure: values in, errors out, no I/O. Every rejection is an *Error with a
// stable reason code (the error.reason clients see) and the offending files
// and field ids in Details.
package validation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
)

// Reason codes of rejected v4 commits (column files and whole files) and
// plans. This is the one list: the service uses these constants only.
const (
	ReasonTableNotV4             = "table-not-v4"
	ReasonUnknownDataFile        = "unknown-data-file"
	ReasonDataFileNotLive        = "data-file-not-live"
	ReasonEmptyFieldIDs          = "empty-field-ids"
	ReasonDuplicateFieldIDs      = "duplicate-field-ids"
	ReasonFieldIDOverlap         = "field-id-overlap"
	ReasonUnknownFieldID         = "unknown-field-id"
	ReasonNotTopLevelField       = "not-top-level-field"
	ReasonReservedFieldID        = "reserved-field-id"
	ReasonPartitionSourceField   = "partition-source-field"
	ReasonIdentifierField        = "identifier-field"
	ReasonRecordCountMismatch    = "record-count-mismatch"
	ReasonColumnFileUnreadable   = "column-file-unreadable"
	ReasonColumnFileSchema       = "column-file-schema-mismatch"
	ReasonRequiredColumn         = "required-column"
	ReasonEqualityDeletesPresent = "equality-deletes-present"
	ReasonLocationOutsideTable   = "location-outside-table"
	ReasonUnsupportedFileFormat  = "unsupported-file-format"
	ReasonFileSizeMismatch       = "file-size-mismatch"
	// ReasonDataFileUnreadable: an added data file's Parquet footer could
	// not be read (files route).
	ReasonDataFileUnreadable = "data-file-unreadable"
	// ReasonColumnFilesUnsupported: a plan would return column files to a
	// client that did not say it reads them.
	ReasonColumnFilesUnsupported = "column-files-unsupported-by-client"
	// ReasonFileMissing: a data or delete file named with its stats (so
	// not read by the server) does not exist.
	ReasonFileMissing = "file-missing"

	// ReasonNotConvertible is the reason code of an upgrade refused because
	// the current snapshot holds files v4 cannot express.
	ReasonNotConvertible = "not-convertible-to-v4"

	// ReasonRowIDsNotMaterialized refuses a rewritten file without a _row_id
	// column: after dropping deleted rows the survivors' ids are no longer
	// first_row_id+position, so they must be stored.
	ReasonRowIDsNotMaterialized = "row-ids-not-materialized"

	// ReasonV4UnsupportedByClient refuses to answer with format version 4
	// table metadata (load, create, register, commit) a client that did
	// not send X-Iceberg-Column-Files: true.
	ReasonV4UnsupportedByClient = "format-version-4-unsupported-by-client"
)

// Error is a rejected commit: nothing is committed.
type Error struct {
	Reason  string
	Message string
	Details map[string]any
}

func (e *Error) Error() string { return e.Message }

func reject(reason string, details map[string]any, format string, args ...any) *Error {
	return &Error{Reason: reason, Message: fmt.Sprintf(format, args...), Details: details}
}

// Reserved metadata field ids that can never be updated by a column file;
// _last_updated_sequence_number (2147483539) is the one allowed metadata id.
const (
	fieldLastUpdatedSeq = 2147483539
	fieldRowID          = 2147483540
	reservedFrom        = 2147483447 // Iceberg reserves ids from here up for metadata columns
)

// ColumnFile is one requested column file.
type ColumnFile struct {
	DataFile        string // base data file (absolute)
	Location        string // column file (absolute)
	FileFormat      string
	FieldIDs        []int
	FileSizeInBytes int64
	RecordCount     int64
}

// Table is what the checks need of the table.
type Table struct {
	Location string
	Schema   *iceberg.Schema
	Specs    []iceberg.PartitionSpec
}

// CheckRequest runs the checks that need only the request and the table:
// file format, location, field ids (non-empty, unique, known, top-level,
// not reserved, not a partition source, not an identifier field) and that
// two column files for one base file in the request do not share an id.
func CheckRequest(t Table, files []ColumnFile) error {
	prefix := strings.TrimRight(t.Location, "/") + "/"
	top := map[int]bool{}
	for _, f := range t.Schema.Fields() {
		top[f.ID] = true
	}
	partSources := map[int]string{}
	for _, spec := range t.Specs {
		for _, pf := range spec.Fields() {
			partSources[pf.SourceID()] = pf.Name
		}
	}
	ident := map[int]bool{}
	for _, id := range t.Schema.IdentifierFieldIDs {
		ident[id] = true
	}
	perBase := map[string]map[int]string{}
	for _, f := range files {
		d := map[string]any{"data-file": f.DataFile, "column-file": f.Location}
		if !strings.EqualFold(f.FileFormat, "parquet") {
			return reject(ReasonUnsupportedFileFormat, d, "Column file %s: file format %q is not supported (parquet only)", f.Location, f.FileFormat)
		}
		if !strings.HasPrefix(f.Location, prefix) {
			return reject(ReasonLocationOutsideTable, d, "Column file %s is not under the table location %s", f.Location, t.Location)
		}
		if len(f.FieldIDs) == 0 {
			return reject(ReasonEmptyFieldIDs, d, "Column file %s lists no field ids", f.Location)
		}
		seen := map[int]bool{}
		for _, id := range f.FieldIDs {
			dd := map[string]any{"data-file": f.DataFile, "column-file": f.Location, "field-id": id}
			if seen[id] {
				return reject(ReasonDuplicateFieldIDs, dd, "Column file %s lists field id %d twice", f.Location, id)
			}
			seen[id] = true
			switch {
			case id == fieldRowID || (id >= reservedFrom && id != fieldLastUpdatedSeq):
				return reject(ReasonReservedFieldID, dd, "Field id %d is a reserved metadata column and cannot be updated", id)
			case id == fieldLastUpdatedSeq:
				// allowed: the newest column file carries row lineage
			default:
				if _, ok := t.Schema.FindFieldByID(id); !ok {
					return reject(ReasonUnknownFieldID, dd, "Field id %d is not in the current schema", id)
				}
				if !top[id] {
					return reject(ReasonNotTopLevelField, dd, "Field id %d is not a top-level field; column files replace whole top-level fields", id)
				}
				if name, ok := partSources[id]; ok {
					return reject(ReasonPartitionSourceField, dd, "Field id %d is the source of partition field %s", id, name)
				}
				if ident[id] {
					return reject(ReasonIdentifierField, dd, "Field id %d is an identifier field", id)
				}
			}
			if other, ok := perBase[f.DataFile][id]; ok {
				dd["other-column-file"] = other
				return reject(ReasonFieldIDOverlap, dd, "Column files %s and %s for %s both carry field id %d", other, f.Location, f.DataFile, id)
			}
			if perBase[f.DataFile] == nil {
				perBase[f.DataFile] = map[int]string{}
			}
			perBase[f.DataFile][id] = f.Location
		}
	}
	return nil
}

// Base is the live state of a base data file.
type Base struct {
	Found       bool
	Live        bool
	IsData      bool
	RecordCount int64
}

// CheckBase checks that the base file exists, is a live data file and that
// the requested row count matches it.
func CheckBase(f ColumnFile, b Base) error {
	d := map[string]any{"data-file": f.DataFile, "column-file": f.Location}
	switch {
	case !b.Found:
		return reject(ReasonUnknownDataFile, d, "Data file %s is not a file of the table", f.DataFile)
	case !b.Live || !b.IsData:
		return reject(ReasonDataFileNotLive, d, "Data file %s is not a live data file", f.DataFile)
	case f.RecordCount != b.RecordCount:
		d["base-record-count"] = b.RecordCount
		return reject(ReasonRecordCountMismatch, d, "Column file %s declares %d rows; data file %s has %d", f.Location, f.RecordCount, f.DataFile, b.RecordCount)
	}
	return nil
}

// FooterColumn is one node of a column file's Parquet schema.
type FooterColumn struct {
	Leaf     bool
	Required bool
	// Physical is the Parquet physical type of a leaf (BOOLEAN, INT32,
	// INT64, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY).
	Physical string
	// TypeLength is the width of a FIXED_LEN_BYTE_ARRAY.
	TypeLength int
}

// Footer is what a column file's footer says.
type Footer struct {
	Readable bool
	Err      string
	NumRows  int64
	Size     int64
	Nodes    map[int]FooterColumn // by field id
}

// CheckFooter checks a column file against its footer: readable, row count
// and size as declared, every listed field present with the table's type,
// and every listed field's node OPTIONAL (null fillers must be possible).
func CheckFooter(t Table, f ColumnFile, ft Footer) error {
	d := map[string]any{"data-file": f.DataFile, "column-file": f.Location}
	if !ft.Readable {
		d["cause"] = ft.Err
		return reject(ReasonColumnFileUnreadable, d, "Column file %s cannot be read: %s", f.Location, ft.Err)
	}
	if ft.NumRows != f.RecordCount {
		d["footer-rows"] = ft.NumRows
		return reject(ReasonRecordCountMismatch, d, "Column file %s has %d rows, not %d", f.Location, ft.NumRows, f.RecordCount)
	}
	if ft.Size != f.FileSizeInBytes {
		d["actual-size"] = ft.Size
		return reject(ReasonFileSizeMismatch, d, "Column file %s is %d bytes, not %d", f.Location, ft.Size, f.FileSizeInBytes)
	}
	for _, id := range f.FieldIDs {
		dd := map[string]any{"data-file": f.DataFile, "column-file": f.Location, "field-id": id}
		n, ok := ft.Nodes[id]
		if !ok {
			return reject(ReasonColumnFileSchema, dd, "Column file %s has no column with field id %d", f.Location, id)
		}
		var want iceberg.Type = iceberg.PrimitiveTypes.Int64
		if id != fieldLastUpdatedSeq {
			field, _ := t.Schema.FindFieldByID(id)
			want = field.Type
		}
		if prim, isPrim := want.(iceberg.PrimitiveType); isPrim {
			if !n.Leaf || !physicalMatches(prim, n) {
				dd["table-type"] = want.String()
				dd["file-type"] = n.Physical
				return reject(ReasonColumnFileSchema, dd, "Column file %s: field %d is %s in the file but %s in the table", f.Location, id, n.Physical, want)
			}
		} else if n.Leaf {
			dd["table-type"] = want.String()
			return reject(ReasonColumnFileSchema, dd, "Column file %s: field %d is a primitive in the file but %s in the table", f.Location, id, want)
		}
	}
	// Only the listed fields' own nodes must be OPTIONAL: a deleted row's
	// filler is a null at that level. Children below them (map keys,
	// required struct children, list elements) may be REQUIRED, since a
	// null parent holds no child; Parquet writes every map key REQUIRED.
	for _, id := range f.FieldIDs {
		if ft.Nodes[id].Required {
			return reject(ReasonRequiredColumn, map[string]any{"data-file": f.DataFile, "column-file": f.Location, "field-id": id},
				"Column file %s: column %d is REQUIRED; column files must be OPTIONAL so deleted rows can hold nulls", f.Location, id)
		}
	}
	return nil
}

// physicalMatches reports whether a Parquet leaf can hold an Iceberg type
// (the physical types Iceberg writers use).
func physicalMatches(t iceberg.PrimitiveType, n FooterColumn) bool {
	switch tt := t.(type) {
	case iceberg.BooleanType:
		return n.Physical == "BOOLEAN"
	case iceberg.Int32Type, iceberg.DateType:
		return n.Physical == "INT32"
	case iceberg.Int64Type, iceberg.TimeType, iceberg.TimestampType, iceberg.TimestampTzType,
		iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return n.Physical == "INT64"
	case iceberg.Float32Type:
		return n.Physical == "FLOAT"
	case iceberg.Float64Type:
		return n.Physical == "DOUBLE"
	case iceberg.StringType, iceberg.BinaryType:
		return n.Physical == "BYTE_ARRAY"
	case iceberg.UUIDType:
		return n.Physical == "FIXED_LEN_BYTE_ARRAY" && n.TypeLength == 16
	case iceberg.FixedType:
		return n.Physical == "FIXED_LEN_BYTE_ARRAY" && n.TypeLength == tt.Len()
	case iceberg.DecimalType:
		switch n.Physical {
		case "INT32":
			return tt.Precision() <= 9
		case "INT64":
			return tt.Precision() <= 18
		case "FIXED_LEN_BYTE_ARRAY", "BYTE_ARRAY":
			return true
		}
	}
	return false
}

// DeleteFile is a live equality-delete file that may apply to a base file.
type DeleteFile struct {
	Location       string
	SequenceNumber int64
	SpecID         int
	Unpartitioned  bool
	Partition      map[int]any
}

// CheckEqualityDeletes rejects a column update when a live equality delete
// could apply to the base file: its data sequence number is greater and it
// is global or in the same partition. After the update bumps the base's
// sequence number those deletes would stop applying.
func CheckEqualityDeletes(f ColumnFile, baseSeq int64, baseSpec int, basePartition map[int]any, deletes []DeleteFile, equal func(a, b any) bool) error {
	for _, del := range deletes {
		if del.SequenceNumber <= baseSeq {
			continue
		}
		applies := del.Unpartitioned
		if !applies && del.SpecID == baseSpec {
			applies = true
			for k, v := range del.Partition {
				if !equal(v, basePartition[k]) {
					applies = false
					break
				}
			}
		}
		if applies {
			return reject(ReasonEqualityDeletesPresent, map[string]any{"data-file": f.DataFile, "delete-file": del.Location},
				"Equality delete %s applies to %s: convert it to a deletion vector first", del.Location, f.DataFile)
		}
	}
	return nil
}

// Merged is the result of applying column files to a base file.
type Merged struct {
	Files   []MergedFile
	Retired int // older column files that lost all their ids
}

// MergedFile is one column file after the carry-over rewrite.
type MergedFile struct {
	Location string
	FieldIDs []int
	New      bool
}

// MergeColumnFiles applies the carry-over rule: the new files' ids are
// removed from every older file, older files left empty are dropped, the
// new files are added. Each id then appears in at most one file. Ids are
// kept sorted and files ordered by location. An older file's
// _last_updated_sequence_number is always removed: the update may change
// any of its rows, so only the new files' lineage (if any) is current.
func MergeColumnFiles(old []MergedFile, added []ColumnFile) Merged {
	taken := map[int]bool{fieldLastUpdatedSeq: true}
	for _, a := range added {
		for _, id := range a.FieldIDs {
			taken[id] = true
		}
	}
	var m Merged
	for _, o := range old {
		keep := make([]int, 0, len(o.FieldIDs))
		for _, id := range o.FieldIDs {
			if !taken[id] {
				keep = append(keep, id)
			}
		}
		if len(keep) == 0 {
			m.Retired++
			continue
		}
		slices.Sort(keep)
		m.Files = append(m.Files, MergedFile{Location: o.Location, FieldIDs: keep})
	}
	for _, a := range added {
		ids := slices.Clone(a.FieldIDs)
		slices.Sort(ids)
		m.Files = append(m.Files, MergedFile{Location: a.Location, FieldIDs: ids, New: true})
	}
	slices.SortFunc(m.Files, func(a, b MergedFile) int { return strings.Compare(a.Location, b.Location) })
	return m
}
