package v4manifest

import (
	"encoding/hex"
	"sort"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// JSON returns a JSON-ready view of the row for people and tools (the
// `catalog manifest inspect` output): field names as in the manifest
// schema, nulls left out, binary as lowercase hex, decimals as strings,
// uuids in canonical form, dates/times/timestamps as their integer values.
// Partition and stats maps are keyed by field id (as strings).
func (tf *TrackedFile) JSON() map[string]any {
	t := tf.Tracking
	tracking := map[string]any{"status": t.Status.String()}
	putInt64(tracking, "snapshot_id", t.SnapshotID)
	putInt64(tracking, "sequence_number", t.SequenceNumber)
	putInt64(tracking, "file_sequence_number", t.FileSequenceNumber)
	putInt64(tracking, "dv_snapshot_id", t.DVSnapshotID)
	putInt64(tracking, "first_row_id", t.FirstRowID)
	putBytes(tracking, "deleted_positions", t.DeletedPositions)
	putBytes(tracking, "replaced_positions", t.ReplacedPositions)
	putInt64(tracking, "latest_column_file_snapshot_id", t.LatestColumnFileSnapshotID)
	m := map[string]any{
		"tracking": tracking, "content_type": int32(tf.ContentType), "format_version": tf.FormatVersion,
		"location": tf.Location, "file_format": tf.FileFormat, "record_count": tf.RecordCount,
		"file_size_in_bytes": tf.FileSizeInBytes,
	}
	if tf.SpecID != nil {
		m["spec_id"] = *tf.SpecID
	}
	if tf.Partition != nil {
		p := map[string]any{}
		for id, v := range tf.Partition {
			p[strconv.Itoa(id)] = jsonValue(v)
		}
		m["partition"] = p
	}
	if tf.ContentStats != nil {
		cs := map[string]any{}
		ids := make([]int, 0, len(tf.ContentStats))
		for id := range tf.ContentStats {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		for _, id := range ids {
			fs := tf.ContentStats[id]
			s := map[string]any{}
			if fs.LowerBound != nil {
				s["lower_bound"] = jsonValue(fs.LowerBound)
			}
			if fs.UpperBound != nil {
				s["upper_bound"] = jsonValue(fs.UpperBound)
			}
			if fs.TightBounds != nil {
				s["tight_bounds"] = *fs.TightBounds
			}
			putInt64(s, "value_count", fs.ValueCount)
			putInt64(s, "null_value_count", fs.NullValueCount)
			putInt64(s, "nan_value_count", fs.NaNValueCount)
			if fs.AvgValueSizeInBytes != nil {
				s["avg_value_size_in_bytes"] = *fs.AvgValueSizeInBytes
			}
			cs[strconv.Itoa(id)] = s
		}
		m["content_stats"] = cs
	}
	if tf.SortOrderID != nil {
		m["sort_order_id"] = *tf.SortOrderID
	}
	if dv := tf.DeletionVector; dv != nil {
		d := map[string]any{"location": dv.Location, "offset": dv.Offset, "size_in_bytes": dv.SizeInBytes, "cardinality": dv.Cardinality}
		putBytes(d, "key_metadata", dv.KeyMetadata)
		m["deletion_vector"] = d
	}
	if mi := tf.ManifestInfo; mi != nil {
		x := map[string]any{
			"added_files_count": mi.AddedFiles, "existing_files_count": mi.ExistingFiles, "deleted_files_count": mi.DeletedFiles,
			"replaced_files_count": mi.ReplacedFiles, "modified_files_count": mi.ModifiedFiles,
			"added_rows_count": mi.AddedRows, "existing_rows_count": mi.ExistingRows, "deleted_rows_count": mi.DeletedRows,
			"replaced_rows_count": mi.ReplacedRows, "modified_rows_count": mi.ModifiedRows, "min_sequence_number": mi.MinSequenceNumber,
		}
		putBytes(x, "dv", mi.DV)
		if n, err := mi.DVCardinality(); err == nil && mi.DV != nil {
			x["dv_cardinality"] = n
		}
		m["manifest_info"] = x
	}
	putBytes(m, "key_metadata", tf.KeyMetadata)
	if tf.SplitOffsets != nil {
		m["split_offsets"] = tf.SplitOffsets
	}
	if tf.EqualityIDs != nil {
		m["equality_ids"] = tf.EqualityIDs
	}
	if tf.ColumnFiles != nil {
		cfs := make([]map[string]any, 0, len(tf.ColumnFiles))
		for _, cf := range tf.ColumnFiles {
			c := map[string]any{"format_version": cf.FormatVersion, "field_ids": cf.FieldIDs, "location": cf.Location,
				"file_format": cf.FileFormat, "file_size_in_bytes": cf.FileSizeInBytes}
			putBytes(c, "key_metadata", cf.KeyMetadata)
			if cf.SplitOffsets != nil {
				c["split_offsets"] = cf.SplitOffsets
			}
			cfs = append(cfs, c)
		}
		m["column_files"] = cfs
	}
	return m
}

func putInt64(m map[string]any, k string, v *int64) {
	if v != nil {
		m[k] = *v
	}
}

func putBytes(m map[string]any, k string, v []byte) {
	if v != nil {
		m[k] = hex.EncodeToString(v)
	}
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return hex.EncodeToString(x)
	case uuid.UUID:
		return x.String()
	case iceberg.Decimal:
		return x.Val.ToString(int32(x.Scale))
	case iceberg.Date:
		return int32(x)
	case iceberg.Time:
		return int64(x)
	case iceberg.Timestamp:
		return int64(x)
	case iceberg.TimestampNano:
		return int64(x)
	}
	return v
}
