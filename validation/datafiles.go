package validation

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// Reason codes shared by the files and column-files routes for the
// request body and the files' Parquet schemas (continuing the list in
// columnfiles.go; same package, one set of Reason* constants).
const (
	// ReasonMissingFieldIDs: a data or column file has Parquet columns
	// without field ids (and, for a data file, the table's
	// schema.name-mapping.default does not map them), so no reader could
	// tell which table field a column holds and its stats would be lost.
	ReasonMissingFieldIDs = "missing-field-ids"
	// ReasonInvalidNameMapping: the table's schema.name-mapping.default
	// property is not an Iceberg name mapping.
	ReasonInvalidNameMapping = "invalid-name-mapping"
	// ReasonContentStatsUnknownField: a content-stats key that is not a
	// field id of the current schema.
	ReasonContentStatsUnknownField = "content-stats-unknown-field"
	// ReasonContentStatsNotPrimitive: content-stats for a field that cannot
	// carry stats: a struct, list or map, a field inside a list or map, or
	// a type v4 manifests keep no stats for.
	ReasonContentStatsNotPrimitive = "content-stats-not-primitive"
	// ReasonInvalidContentStats: malformed content-stats: not an object of
	// objects, a key that is not a number, a bound that does not decode
	// for its field's type, negative or inconsistent counts, a NaN count on
	// a non-float field, a lower bound above the upper bound.
	ReasonInvalidContentStats = "invalid-content-stats"
	// ReasonInvalidFileEntry: a files-commit entry that is malformed in
	// itself: no location, an unknown spec or sort order id, partition
	// values that do not fit the spec, a file listed twice.
	ReasonInvalidFileEntry = "invalid-file-entry"
	// ReasonEmptyCommit: a files or column-files commit with nothing in it.
	ReasonEmptyCommit = "empty-commit"
)

// CheckFieldIDs refuses a file (kind "Data file" or "Column file") whose
// Parquet columns at paths unidentified carry no field id (after the
// table's name mapping, if any), with ReasonMissingFieldIDs.
func CheckFieldIDs(kind, location string, unidentified []string) error {
	if len(unidentified) == 0 {
		return nil
	}
	shown := unidentified
	if len(shown) > 5 {
		shown = shown[:5]
	}
	d := map[string]any{"file": location, "columns": shown}
	return reject(ReasonMissingFieldIDs, d,
		"%s %s has %d Parquet column(s) without a field id (%s): write the PARQUET:field_id of every field (list elements, map keys and values included), or set the table's schema.name-mapping.default",
		kind, location, len(unidentified), strings.Join(shown, ", "))
}

// CheckStatsField checks that content-stats may be given for field id of
// sc: a field of the schema, primitive, not inside a list or map, and of
// a type v4 manifests keep stats for (hasColumn, from the manifest
// schema). It fails with ReasonContentStatsUnknownField or
// ReasonContentStatsNotPrimitive.
func CheckStatsField(sc *iceberg.Schema, id int, hasColumn bool) error {
	d := map[string]any{"field-id": id}
	f, ok := sc.FindFieldByID(id)
	if !ok {
		return reject(ReasonContentStatsUnknownField, d, "content-stats: field %d is not in the current schema", id)
	}
	if _, ok := f.Type.(iceberg.PrimitiveType); !ok {
		return reject(ReasonContentStatsNotPrimitive, d, "content-stats: field %d (%s) is a %s; stats are kept for primitive fields only", id, f.Name, f.Type)
	}
	parents, err := iceberg.IndexParents(sc)
	if err != nil {
		return reject(ReasonContentStatsUnknownField, d, "content-stats: field %d: %v", id, err)
	}
	for p, ok := parents[id]; ok; p, ok = parents[p] {
		pf, _ := sc.FindFieldByID(p)
		if _, isStruct := pf.Type.(*iceberg.StructType); !isStruct {
			return reject(ReasonContentStatsNotPrimitive, d, "content-stats: field %d (%s) is inside %s, a %s; fields inside lists and maps have no stats", id, f.Name, pf.Name, pf.Type)
		}
	}
	if !hasColumn {
		return reject(ReasonContentStatsNotPrimitive, d, "content-stats: field %d (%s) is a %s, for which v4 manifests keep no stats", id, f.Name, f.Type)
	}
	return nil
}

// StatsCounts are the counts of one field's content-stats.
type StatsCounts struct {
	Value, Null, NaN *int64
}

// CheckStatsCounts checks one field's counts: none negative, nulls and
// NaNs together at most the values, and a NaN count only for float and
// double fields. recordCount bounds the value count when positive.
func CheckStatsCounts(id int, t iceberg.Type, c StatsCounts, recordCount int64) error {
	d := map[string]any{"field-id": id}
	for _, n := range []*int64{c.Value, c.Null, c.NaN} {
		if n != nil && *n < 0 {
			return reject(ReasonInvalidContentStats, d, "content-stats %d: counts cannot be negative", id)
		}
	}
	if c.NaN != nil {
		switch t.(type) {
		case iceberg.Float32Type, iceberg.Float64Type:
		default:
			return reject(ReasonInvalidContentStats, d, "content-stats %d: nan-value-count is for float and double fields, not %s", id, t)
		}
	}
	if c.Value != nil {
		var nn int64
		if c.Null != nil {
			nn += *c.Null
		}
		if c.NaN != nil {
			nn += *c.NaN
		}
		if nn > *c.Value || nn < 0 {
			return reject(ReasonInvalidContentStats, d, "content-stats %d: null-value-count and nan-value-count exceed value-count", id)
		}
		if recordCount > 0 && *c.Value > recordCount {
			return reject(ReasonInvalidContentStats, d, "content-stats %d: value-count %d exceeds the file's record-count %d", id, *c.Value, recordCount)
		}
	}
	return nil
}

// InvalidStats refuses content-stats that do not decode (reason
// ReasonInvalidContentStats); field is 0 when not about one field.
func InvalidStats(field int, format string, args ...any) error {
	d := map[string]any{}
	if field != 0 {
		d["field-id"] = field
	}
	return reject(ReasonInvalidContentStats, d, "content-stats: %s", fmt.Sprintf(format, args...))
}

// InvalidFileEntry refuses a malformed files-commit entry
// (ReasonInvalidFileEntry); file is "" when the entry names none.
func InvalidFileEntry(file, format string, args ...any) error {
	d := map[string]any{}
	if file != "" {
		d["file"] = file
	}
	return reject(ReasonInvalidFileEntry, d, format, args...)
}
