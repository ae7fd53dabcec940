package v4manifest

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/iceberg-go"
)

// layout is what a writer derives from the table's schema, specs and row
// lineage alone: the Arrow schema, its Parquet encodings and where each
// field sits. Every commit of a wide table used to rebuild it (hundreds of
// stats columns, each with field-id metadata to format and parse again);
// it is built once per table shape and shared, read-only, by the writers.
type layout struct {
	schema *arrow.Schema
	// schemaJSON is the iceberg.schema key's value ("" without a schema).
	schemaJSON string
	// delta are the per-column encodings (deltaStatsColumns).
	delta []parquet.WriterProperty
	// topIDs[i] is the field id of top-level field i (-1 when absent).
	topIDs []int
	// statsCol is the index of content_stats among the top-level fields
	// (-1 when the manifest has none); stats describes its children.
	statsCol int
	stats    []statsShape
	statsIdx map[int]int // table field id -> child index in content_stats
	// partIDs[i] is the partition field id of child i of partition.
	partIDs []int
}

// statsShape is one child of content_stats, as statsChild without the
// builders: its table field, the metric offset of each member, and which
// members are the bounds.
type statsShape struct {
	tableField   int
	metrics      []int
	lower, upper int  // member indexes
	long         bool // bounds are longs (Int64 in Arrow)
}

// layouts caches layouts by table shape. A catalog writes for many tables,
// so it is bounded: when full it starts over, which costs one rebuild per
// table shape in use.
var layouts = struct {
	sync.Mutex
	m map[string]*layout
}{m: map[string]*layout{}}

const maxLayouts = 256

// layoutFor returns the layout of a manifest for sc, specs and rowLineage,
// from the cache when this shape was seen before. It fails when the schema
// or specs cannot be typed.
func layoutFor(sc *iceberg.Schema, specs []iceberg.PartitionSpec, rowLineage bool) (*layout, error) {
	var schemaJSON string
	if sc != nil {
		if js, err := sc.MarshalJSON(); err == nil {
			schemaJSON = string(js)
		}
	}
	key, keyed := layoutKey(sc, schemaJSON, specs, rowLineage)
	if keyed {
		layouts.Lock()
		l := layouts.m[key]
		layouts.Unlock()
		if l != nil {
			return l, nil
		}
	}
	l, err := buildLayout(sc, specs, rowLineage)
	if err != nil {
		return nil, err
	}
	l.schemaJSON = schemaJSON
	if keyed {
		layouts.Lock()
		if len(layouts.m) >= maxLayouts {
			clear(layouts.m)
		}
		layouts.m[key] = l
		layouts.Unlock()
	}
	return l, nil
}

// layoutKey names a table shape by the JSON of its schema and specs, which
// hold everything buildLayout reads (ids, names, types, transforms). It
// reports false when the shape cannot be named (then it is not cached).
func layoutKey(sc *iceberg.Schema, schemaJSON string, specs []iceberg.PartitionSpec, rowLineage bool) (string, bool) {
	if sc != nil && schemaJSON == "" {
		return "", false
	}
	specsJSON, err := json.Marshal(specs)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(schemaJSON) + len(specsJSON) + 4)
	b.WriteString(schemaJSON)
	b.WriteByte(0)
	b.Write(specsJSON)
	b.WriteByte(0)
	if rowLineage {
		b.WriteByte('L')
	}
	return b.String(), true
}

func buildLayout(sc *iceberg.Schema, specs []iceberg.PartitionSpec, rowLineage bool) (*layout, error) {
	as, err := ArrowSchema(sc, specs, rowLineage)
	if err != nil {
		return nil, err
	}
	l := &layout{schema: as, delta: deltaStatsColumns(as), statsCol: -1, statsIdx: map[int]int{}}
	for i, f := range as.Fields() {
		id := fieldID(f)
		l.topIDs = append(l.topIDs, id)
		switch id {
		case IDContentStats:
			l.statsCol = i
			l.planStats(f)
		case IDPartition:
			for _, pf := range f.Type.(*arrow.StructType).Fields() {
				l.partIDs = append(l.partIDs, fieldID(pf))
			}
		}
	}
	return l, nil
}

// planStats records, for each child of content_stats field f, its table
// field, metric offsets and bound members.
func (l *layout) planStats(f arrow.Field) {
	for j, sf := range f.Type.(*arrow.StructType).Fields() {
		fid, _ := FieldForStatsBase(fieldID(sf))
		l.statsIdx[fid] = j
		s := statsShape{tableField: fid}
		for k, m := range sf.Type.(*arrow.StructType).Fields() {
			off := fieldID(m) - fieldID(sf)
			s.metrics = append(s.metrics, off)
			switch off {
			case offLowerBound:
				s.lower = k
				s.long = m.Type.ID() == arrow.INT64
			case offUpperBound:
				s.upper = k
			}
		}
		l.stats = append(l.stats, s)
	}
}
