package v4export

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/lakehold/catalog/v4manifest"
)

// converter turns v4 rows into iceberg-go manifest entries.
type converter struct {
	in    Input
	specs map[int]iceberg.PartitionSpec
}

// entry converts a data or equality-delete row into an EXISTING entry of
// the export snapshot that keeps the row's sequence numbers (the export's
// own when the row has none) and, for data in format 3, its first_row_id.
func (c converter) entry(r *v4manifest.TrackedFile, content iceberg.ManifestEntryContent) (int, iceberg.ManifestEntry, error) {
	specID := 0
	if r.SpecID != nil {
		specID = int(*r.SpecID)
	}
	spec, ok := c.specs[specID]
	if !ok {
		return 0, nil, fmt.Errorf("%s: partition spec %d is not in the table metadata", r.Location, specID)
	}
	format, err := iceberg.FileFormatFromString(strings.ToUpper(r.FileFormat))
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", r.Location, err)
	}
	part, logical := c.partition(spec, r.Partition)
	b, err := iceberg.NewDataFileBuilder(spec, content, r.Location, format, part, logical, nil, r.RecordCount, r.FileSizeInBytes)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", r.Location, err)
	}
	c.addStats(b, r.ContentStats)
	if len(r.KeyMetadata) > 0 {
		b.KeyMetadata(r.KeyMetadata)
	}
	if len(r.SplitOffsets) > 0 {
		b.SplitOffsets(r.SplitOffsets)
	}
	if r.SortOrderID != nil && content == iceberg.EntryContentData {
		b.SortOrderID(int(*r.SortOrderID))
	}
	if content == iceberg.EntryContentEqDeletes {
		ids := make([]int, len(r.EqualityIDs))
		for i, id := range r.EqualityIDs {
			ids[i] = int(id)
		}
		b.EqualityFieldIDs(ids)
	}
	if c.in.FormatVersion >= 3 && content == iceberg.EntryContentData && r.Tracking.FirstRowID != nil {
		b.FirstRowID(*r.Tracking.FirstRowID)
	}
	return specID, c.existing(b.Build(), r.Tracking.SequenceNumber, r.Tracking.FileSequenceNumber), nil
}

// dvEntry is the format 3 deletion-vector delete file of data row r: a
// Puffin blob referencing r, at the export's sequence number (so that it
// applies to r whatever r's).
func (c converter) dvEntry(r *v4manifest.TrackedFile, specID int) (iceberg.ManifestEntry, error) {
	d := r.DeletionVector
	part, logical := c.partition(c.specs[specID], r.Partition)
	b, err := iceberg.NewDataFileBuilder(c.specs[specID], iceberg.EntryContentPosDeletes, d.Location, iceberg.PuffinFile,
		part, logical, nil, d.Cardinality, d.SizeInBytes)
	if err != nil {
		return nil, fmt.Errorf("deletion vector of %s: %w", r.Location, err)
	}
	b.ReferencedDataFile(r.Location).ContentOffset(d.Offset).ContentSizeInBytes(d.SizeInBytes)
	if len(d.KeyMetadata) > 0 {
		b.KeyMetadata(d.KeyMetadata)
	}
	return c.existing(b.Build(), nil, nil), nil
}

// existing wraps df as an entry of the export snapshot; nil sequence
// numbers become the export's.
func (c converter) existing(df iceberg.DataFile, seq, fileSeq *int64) iceberg.ManifestEntry {
	snap := c.in.SnapshotID
	if c.in.FormatVersion < 2 {
		return iceberg.NewManifestEntryBuilder(iceberg.EntryStatusEXISTING, &snap, df).Build()
	}
	s := c.in.SequenceNumber
	if seq != nil {
		s = *seq
	}
	fs := s
	if fileSeq != nil {
		fs = *fileSeq
	}
	return iceberg.NewManifestEntryBuilder(iceberg.EntryStatusEXISTING, &snap, df).SequenceNum(s).FileSequenceNum(fs).Build()
}

// partition returns a row's partition tuple and the Avro logical types of
// its fields, as iceberg-go's manifest writer takes them (the v4 reader
// yields the same Go values iceberg-go's literals hold).
func (c converter) partition(spec iceberg.PartitionSpec, values map[int]any) (map[int]any, map[int]string) {
	if spec.NumFields() == 0 {
		return nil, nil
	}
	part := make(map[int]any, spec.NumFields())
	logical := map[int]string{}
	for _, pf := range spec.Fields() {
		part[pf.FieldID] = values[pf.FieldID]
		src, ok := c.in.Schema.FindFieldByID(pf.SourceID())
		if !ok {
			continue
		}
		if lt := logicalType(pf.Transform.ResultType(src.Type)); lt != "" {
			logical[pf.FieldID] = lt
		}
	}
	return part, logical
}

// logicalType is the Avro logical type of a partition value of type t.
func logicalType(t iceberg.Type) string {
	switch t.(type) {
	case iceberg.DateType:
		return "date"
	case iceberg.TimeType:
		return "time-micros"
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return "timestamp-micros"
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return "timestamp-nanos"
	case iceberg.DecimalType:
		return "decimal"
	case iceberg.UUIDType:
		return "uuid"
	}
	return ""
}

// addStats sets the v3 metrics of a file from its v4 stats: counts as they
// are, bounds in Iceberg's single-value binary form of the field's current
// type. A bound that does not convert is left out (a missing bound only
// costs pruning); the lineage columns' stats are not carried (v3 has no
// metrics for them).
func (c converter) addStats(b *iceberg.DataFileBuilder, stats map[int]*v4manifest.FieldStats) {
	if len(stats) == 0 {
		return
	}
	vc, nc, nan := map[int]int64{}, map[int]int64{}, map[int]int64{}
	lo, hi := map[int][]byte{}, map[int][]byte{}
	for id, fs := range stats {
		t, ok := c.in.Schema.FindTypeByID(id)
		prim, primitive := t.(iceberg.PrimitiveType)
		if !ok || !primitive || fs == nil {
			continue // the lineage columns, which the schema does not hold
		}
		if fs.ValueCount != nil {
			vc[id] = *fs.ValueCount
		}
		if fs.NullValueCount != nil {
			nc[id] = *fs.NullValueCount
		}
		if fs.NaNValueCount != nil {
			nan[id] = *fs.NaNValueCount
		}
		if v, ok := EncodeBound(prim, fs.LowerBound); ok {
			lo[id] = v
		}
		if v, ok := EncodeBound(prim, fs.UpperBound); ok {
			hi[id] = v
		}
	}
	b.ValueCounts(vc).NullValueCounts(nc).NaNValueCounts(nan).LowerBoundValues(lo).UpperBoundValues(hi)
}

// EncodeBound encodes a v4 bound (the Go value the v4 reader yields) in
// Iceberg's single-value binary form for type t: false when v is nil or
// not a value of t (a bound of an older, narrower type is widened).
func EncodeBound(t iceberg.PrimitiveType, v any) ([]byte, bool) {
	lit, ok := literalOf(v)
	if !ok {
		return nil, false
	}
	lit, err := convertLiteral(lit, t)
	if err != nil || lit == nil {
		return nil, false
	}
	b, err := lit.MarshalBinary()
	if err != nil {
		return nil, false
	}
	if b == nil {
		b = []byte{} // an empty string is a bound, not a missing one
	}
	return b, true
}

// convertLiteral is lit.To(t), which panics on some inputs iceberg-go
// does not expect: a bound must never take the server down.
func convertLiteral(lit iceberg.Literal, t iceberg.PrimitiveType) (out iceberg.Literal, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("bound does not convert to %s", t)
		}
	}()
	if lit.Type().Equals(t) {
		return lit, nil
	}
	return lit.To(t)
}

// literalOf wraps a Go value of the v4 reader as an iceberg-go literal.
func literalOf(v any) (iceberg.Literal, bool) {
	switch v := v.(type) {
	case bool:
		return iceberg.NewLiteral(v), true
	case int32:
		return iceberg.NewLiteral(v), true
	case int64:
		return iceberg.NewLiteral(v), true
	case float32:
		return iceberg.NewLiteral(v), true
	case float64:
		return iceberg.NewLiteral(v), true
	case iceberg.Date:
		return iceberg.NewLiteral(v), true
	case iceberg.Time:
		return iceberg.NewLiteral(v), true
	case iceberg.Timestamp:
		return iceberg.NewLiteral(v), true
	case iceberg.TimestampNano:
		return iceberg.NewLiteral(v), true
	case string:
		return iceberg.NewLiteral(v), true
	case []byte:
		return iceberg.NewLiteral(v), true
	case uuid.UUID:
		return iceberg.NewLiteral(v), true
	case iceberg.Decimal:
		return iceberg.NewLiteral(v), true
	}
	return nil, false
}
