package v4manifest

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/lakehold/catalog/internal/mumbling"
)

// Status is a TrackedFile's entry status.
type Status int32

// Entry statuses. EXISTING, ADDED and MODIFIED rows are live.
const (
	StatusExisting Status = 0
	StatusAdded    Status = 1
	StatusDeleted  Status = 2
	StatusReplaced Status = 3
	StatusModified Status = 4
)

// Live reports whether a row with this status describes a current file.
func (s Status) Live() bool {
	return s == StatusExisting || s == StatusAdded || s == StatusModified
}

func (s Status) String() string {
	switch s {
	case StatusExisting:
		return "EXISTING"
	case StatusAdded:
		return "ADDED"
	case StatusDeleted:
		return "DELETED"
	case StatusReplaced:
		return "REPLACED"
	case StatusModified:
		return "MODIFIED"
	}
	return fmt.Sprintf("Status(%d)", int32(s))
}

// ContentType says what a TrackedFile references.
type ContentType int32

// Content types. POSITION_DELETES (1) is never written in v4.
const (
	ContentData            ContentType = 0
	ContentEqualityDeletes ContentType = 2
	ContentDataManifest    ContentType = 3
	ContentDeleteManifest  ContentType = 4
)

// Tracking is the lifecycle block of a row (field 147).
type Tracking struct {
	Status                     Status
	SnapshotID                 *int64
	SequenceNumber             *int64
	FileSequenceNumber         *int64
	DVSnapshotID               *int64
	FirstRowID                 *int64
	DeletedPositions           []byte
	ReplacedPositions          []byte
	LatestColumnFileSnapshotID *int64
}

// DeletionVector is a DV colocated with a data row (field 148).
type DeletionVector struct {
	Location    string
	Offset      int64
	SizeInBytes int64
	Cardinality int64
	KeyMetadata []byte
}

// ManifestInfo summarises a leaf manifest on its root row (field 150).
type ManifestInfo struct {
	AddedFiles, ExistingFiles, DeletedFiles, ReplacedFiles, ModifiedFiles int32
	AddedRows, ExistingRows, DeletedRows, ReplacedRows, ModifiedRows      int64
	MinSequenceNumber                                                     int64
	// DV is the manifest deletion vector: a Mumbling bitmap of the leaf
	// positions that are not live (cumulative). Readers of the leaf leave
	// those rows out (ReaderOptions.InheritFrom).
	DV []byte
}

// DVCardinality returns the number of leaf positions in DV, the value of
// dv_cardinality (523), and 0 when there is no DV. It is computed from the
// vector, never stored apart from it, so a row whose DV changes cannot
// carry a stale count. It fails (wrapping mumbling.ErrMalformed) when DV is
// not a Mumbling bitmap.
func (mi *ManifestInfo) DVCardinality() (int64, error) {
	if mi.DV == nil {
		return 0, nil
	}
	n, err := mumbling.Cardinality(mi.DV)
	return int64(n), err
}

// ColumnFile is one file that supplies some columns of a base data file.
type ColumnFile struct {
	FormatVersion   int32
	FieldIDs        []int32
	Location        string
	FileFormat      string
	FileSizeInBytes int64
	KeyMetadata     []byte
	SplitOffsets    []int64
}

// FieldStats are the typed stats of one table field. Bounds hold Go values
// of the field's type (see the package's value mapping in values.go).
type FieldStats struct {
	LowerBound          any
	UpperBound          any
	TightBounds         *bool
	ValueCount          *int64
	NullValueCount      *int64
	NaNValueCount       *int64
	AvgValueSizeInBytes *int32
}

// TrackedFile is one manifest row.
type TrackedFile struct {
	Tracking        Tracking
	ContentType     ContentType
	FormatVersion   int32
	Location        string
	FileFormat      string
	RecordCount     int64
	FileSizeInBytes int64
	SpecID          *int32
	// Partition maps partition field ids to values; nil when unpartitioned.
	Partition map[int]any
	// ContentStats maps table field ids to stats.
	ContentStats   map[int]*FieldStats
	SortOrderID    *int32
	DeletionVector *DeletionVector
	ManifestInfo   *ManifestInfo
	KeyMetadata    []byte
	SplitOffsets   []int64
	EqualityIDs    []int32
	ColumnFiles    []ColumnFile
	// Pos is the row's 0-based position in its leaf, set when the leaf is
	// read for a root row (ReaderOptions.InheritFrom); never written.
	Pos int64
}

// MaskedPositions decodes the manifest deletion vector of a root row: the
// positions of its leaf that are not live (nil when it has none). It fails
// when the bitmap does not decode.
func (tf *TrackedFile) MaskedPositions() (map[int64]bool, error) {
	if tf.ManifestInfo == nil || tf.ManifestInfo.DV == nil {
		return nil, nil
	}
	return decodePositions(tf.ManifestInfo.DV)
}

// decodePositions turns a Mumbling bitmap into a position set.
func decodePositions(b []byte) (map[int64]bool, error) {
	ps, err := mumbling.Decode(b)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(ps))
	for _, p := range ps {
		out[int64(p)] = true
	}
	return out, nil
}

// ReplacedInSnapshot decodes a root row's replaced_positions: the leaf
// positions its snapshot replaced (nil when none).
func (tf *TrackedFile) ReplacedInSnapshot() (map[int64]bool, error) {
	if tf.Tracking.ReplacedPositions == nil {
		return nil, nil
	}
	return decodePositions(tf.Tracking.ReplacedPositions)
}

// Content is the kind of manifest a file holds.
type Content int

// Manifest kinds.
const (
	ContentRoot Content = iota
	ContentDataLeaf
	ContentDeleteLeaf
)

// Errors returned by model helpers.
var (
	// ErrTerminal is returned when carrying forward a DELETED or REPLACED row.
	ErrTerminal = errors.New("v4manifest: DELETED and REPLACED rows are not carried forward")
)

// CarryForward returns the row as it appears when copied, unchanged, into a
// new manifest: live rows become EXISTING with all values kept (explicitly,
// so nothing is re-inherited). DELETED and REPLACED rows are terminal.
func CarryForward(tf TrackedFile) (TrackedFile, error) {
	if !tf.Tracking.Status.Live() {
		return TrackedFile{}, fmt.Errorf("%w: %s is %s", ErrTerminal, tf.Location, tf.Tracking.Status)
	}
	tf.Tracking.Status = StatusExisting
	tf.Tracking.DeletedPositions = nil
	tf.Tracking.ReplacedPositions = nil
	return tf, nil
}

// ComputeManifestInfo summarises the rows of a leaf: counts per status and
// the minimum data sequence number of the live rows (0 when none is known).
func ComputeManifestInfo(rows []TrackedFile) ManifestInfo {
	var mi ManifestInfo
	minSeq := int64(-1)
	for i := range rows {
		r := &rows[i]
		switch r.Tracking.Status {
		case StatusAdded:
			mi.AddedFiles++
			mi.AddedRows += r.RecordCount
		case StatusExisting:
			mi.ExistingFiles++
			mi.ExistingRows += r.RecordCount
		case StatusDeleted:
			mi.DeletedFiles++
			mi.DeletedRows += r.RecordCount
		case StatusReplaced:
			mi.ReplacedFiles++
			mi.ReplacedRows += r.RecordCount
		case StatusModified:
			mi.ModifiedFiles++
			mi.ModifiedRows += r.RecordCount
		}
		if r.Tracking.Status.Live() && r.Tracking.SequenceNumber != nil {
			if s := *r.Tracking.SequenceNumber; minSeq < 0 || s < minSeq {
				minSeq = s
			}
		}
	}
	if minSeq > 0 {
		mi.MinSequenceNumber = minSeq
	}
	return mi
}

// schemePattern is RFC 3986's scheme: a letter, then letters, digits, +-.
var schemePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]*:`)

// IsAbsolute reports whether a location starts with a URI scheme.
func IsAbsolute(location string) bool { return schemePattern.MatchString(location) }

// Relativize returns location relative to tableLocation when it lies below
// it, and location unchanged otherwise.
func Relativize(tableLocation, location string) string {
	base := strings.TrimRight(tableLocation, "/") + "/"
	if rel, ok := strings.CutPrefix(location, base); ok && rel != "" && !strings.HasPrefix(rel, "/") {
		return rel
	}
	return location
}

// Resolve turns a stored location into an absolute one: absolute locations
// are kept, relative ones are joined to the table location with "/".
func Resolve(tableLocation, location string) string {
	if IsAbsolute(location) {
		return location
	}
	return strings.TrimRight(tableLocation, "/") + "/" + location
}

// Inherit fills the values a leaf row inherits from the root row that
// references its leaf: snapshot id when null; data and file sequence numbers
// when null and the row is ADDED (data sequence also for MODIFIED); and
// first_row_id for data rows, counting record counts of earlier data rows
// that also inherit.
func Inherit(root TrackedFile, rows []TrackedFile) {
	nextRowID := root.Tracking.FirstRowID
	var next int64
	if nextRowID != nil {
		next = *nextRowID
	}
	for i := range rows {
		t := &rows[i].Tracking
		if t.SnapshotID == nil && root.Tracking.SnapshotID != nil {
			t.SnapshotID = ptr(*root.Tracking.SnapshotID)
		}
		if t.SequenceNumber == nil && (t.Status == StatusAdded || t.Status == StatusModified) && root.Tracking.SequenceNumber != nil {
			t.SequenceNumber = ptr(*root.Tracking.SequenceNumber)
		}
		if t.FileSequenceNumber == nil && t.Status == StatusAdded && root.Tracking.SequenceNumber != nil {
			t.FileSequenceNumber = ptr(*root.Tracking.SequenceNumber)
		}
		if rows[i].ContentType == ContentData && t.FirstRowID == nil && nextRowID != nil {
			t.FirstRowID = ptr(next)
			next += rows[i].RecordCount
		}
	}
}

func ptr[T any](v T) *T { return &v }
