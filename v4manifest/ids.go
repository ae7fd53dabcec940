// Package v4manifest reads and writes Iceberg v4 root and leaf manifests
// (Parquet files of TrackedFile rows), including column files, deletion
// vectors and typed content stats. It is pure: values in, files and values
// out; no HTTP, no database. Field ids and layout follow the v4 design as
// summarised in docs/v4-manifests.md; every id lives in this file.
package v4manifest

// Field ids of the TrackedFile row.
const (
	IDTracking       = 147
	IDContentType    = 134
	IDFormatVersion  = 157
	IDLocation       = 100
	IDFileFormat     = 101
	IDRecordCount    = 103
	IDFileSize       = 104
	IDSpecID         = 141
	IDPartition      = 102
	IDContentStats   = 146
	IDSortOrderID    = 140
	IDDeletionVector = 148
	IDManifestInfo   = 150
	IDKeyMetadata    = 131
	IDSplitOffsets   = 132
	IDSplitOffsetsEl = 133
	IDEqualityIDs    = 135
	IDEqualityIDsEl  = 136
	IDColumnFiles    = 158
	IDColumnFilesEl  = 159
)

// Field ids of Tracking (147).
const (
	IDStatus                     = 0
	IDSnapshotID                 = 1
	IDSequenceNumber             = 3
	IDFileSequenceNumber         = 4
	IDDVSnapshotID               = 5
	IDFirstRowID                 = 142
	IDDeletedPositions           = 6
	IDReplacedPositions          = 7
	IDLatestColumnFileSnapshotID = 160
)

// Field ids of DeletionVector (148).
const (
	IDDVLocation    = 155
	IDDVOffset      = 144
	IDDVSize        = 145
	IDDVCardinality = 156
	IDDVKeyMetadata = 149
)

// Field ids of ManifestInfo (150).
const (
	IDAddedFilesCount    = 504
	IDExistingFilesCount = 505
	IDDeletedFilesCount  = 506
	IDReplacedFilesCount = 520
	IDModifiedFilesCount = 524
	IDAddedRowsCount     = 512
	IDExistingRowsCount  = 513
	IDDeletedRowsCount   = 514
	IDReplacedRowsCount  = 521
	IDModifiedRowsCount  = 525
	IDMinSequenceNumber  = 516
	IDManifestDV         = 522
	// IDManifestDVCardinality is the number of positions in dv: written
	// with every dv, checked against it on read (see docs/v4-manifests.md).
	IDManifestDVCardinality = 523
)

// Field ids of ColumnFile (element 159 of column_files).
const (
	IDCFFormatVersion  = 161
	IDCFFieldIDs       = 162
	IDCFFieldIDsEl     = 163
	IDCFLocation       = 164
	IDCFFileFormat     = 165
	IDCFFileSize       = 166
	IDCFKeyMetadata    = 167
	IDCFSplitOffsets   = 168
	IDCFSplitOffsetsEl = 169
)

// Reserved table field ids of the row-lineage metadata columns and the
// stats bases they map to.
const (
	FieldLastUpdatedSequenceNumber = 2147483539
	FieldRowID                     = 2147483540
	FieldPos                       = 2147483645

	statsBaseLastUpdated = 9000
	statsBaseRowID       = 9200
)

// Metric offsets inside a per-field stats struct.
const (
	offLowerBound  = 1
	offUpperBound  = 2
	offTightBounds = 3
	offValueCount  = 4
	offNullCount   = 5
	offNaNCount    = 6
	offAvgSize     = 7
)

// StatsBase returns the id of the stats struct of table field f, and false
// when f cannot have stats (its base would fall outside the reserved range).
func StatsBase(f int) (int, bool) {
	switch f {
	case FieldLastUpdatedSequenceNumber:
		return statsBaseLastUpdated, true
	case FieldRowID:
		return statsBaseRowID, true
	}
	if f < 0 || f >= 999_950 {
		return 0, false
	}
	return 10_000 + 200*f, true
}

// FieldForStatsBase inverts StatsBase.
func FieldForStatsBase(base int) (int, bool) {
	switch base {
	case statsBaseLastUpdated:
		return FieldLastUpdatedSequenceNumber, true
	case statsBaseRowID:
		return FieldRowID, true
	}
	if base < 10_000 || (base-10_000)%200 != 0 {
		return 0, false
	}
	return (base - 10_000) / 200, true
}
