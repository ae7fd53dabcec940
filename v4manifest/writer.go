package v4manifest

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
)

// ErrInvalidRow is returned by Writer.Write for a row that breaks the v4
// manifest rules (content type for the manifest kind, required blocks).
var ErrInvalidRow = errors.New("v4manifest: invalid row")

// WriterOptions configure a manifest writer.
type WriterOptions struct {
	// Content is the manifest kind: root, data leaf or delete leaf.
	Content Content
	// Schema is the table schema: it types content_stats and partitions.
	Schema *iceberg.Schema
	// SchemaID is written as the schema-id key.
	SchemaID int
	// Specs are all of the table's partition specs (their union types the
	// partition column).
	Specs []iceberg.PartitionSpec
	// RowLineage adds stats for _row_id and _last_updated_sequence_number.
	RowLineage bool
	// TableLocation, when set, makes locations under it relative.
	TableLocation string
	// BatchRows is how many rows are buffered before they are encoded
	// (default 16384); RowGroupRows bounds a row group (default 131072).
	BatchRows, RowGroupRows int
}

// Writer streams TrackedFile rows into a Parquet manifest. Memory stays flat
// in the number of rows: rows are encoded batch by batch, within row groups
// of at most RowGroupRows. Close must always be called (it also stops the
// encoding goroutine).
type Writer struct {
	opts   WriterOptions
	out    io.Writer
	lay    *layout
	alloc  *writerAlloc
	schema *arrow.Schema
	bld    *array.RecordBuilder
	fw     *pqarrow.FileWriter // nil until start
	// byID[id] is the builder of top-level field id (nil when absent): a
	// slice, as appendRow looks up some fifteen fields per row.
	byID     []array.Builder
	rows     int // rows in the current batch
	total    int
	statsIdx map[int]int // table field id -> child index in content_stats
	// statsPlan[i] describes child i of content_stats, so rows are appended
	// without walking Arrow types (which copies field slices) per row.
	statsPlan []statsChild
	// statsB is the content_stats builder (nil when the manifest has none).
	// Only its members' builders are appended to: the validity of
	// content_stats and of its children is kept in batchValid and each
	// statsChild's valid, and statsArray assembles the column (see there).
	statsB     *array.StructBuilder
	batchValid []bool
	// Stats are unboxed into cells when a row is written and go to the
	// builders column by column every statsChunk rows. cells holds
	// cellRows cells per stats column, column after column, so that each
	// column is read back sequentially. statsValid says whether each
	// pending row has content_stats at all. rowStats holds the current
	// row's FieldStats between validate and appendRow only.
	cells      []statCell
	cellRows   int
	statsValid []bool
	pending    int
	rowStats   []*FieldStats
	// rowDVCard is the cardinality of the current row's manifest_info.dv,
	// computed by validate, written as dv_cardinality by appendRow.
	rowDVCard int64
	// scratch is flushStats' column, reused from column to column.
	scratch statsColumn
	// partIDs[i] is the partition field id of child i of partition.
	partIDs []int
	closed  bool

	// Batches are encoded on a second goroutine while the next one is
	// built: building and Parquet encoding take about equal time.
	batches chan batch
	encoded chan error
	// broken is set when a row was half appended (a bug: validate should
	// have refused it); the builders are then out of step, so Close
	// writes nothing and reports it instead of panicking.
	broken error
}

type statsChild struct {
	tableField int
	metrics    []int // metric offset of each member, in member order
	// long is set when the bounds are longs: they are unboxed into the
	// cells; other bounds are appended to their builders as rows come.
	long bool
	// The child's builders, fetched once: the record builder keeps its
	// builders across batches.
	sb           *array.StructBuilder
	members      []array.Builder
	lower, upper array.Builder
	// valid says, for each row of the batch, whether the row has stats
	// for this field.
	valid []bool
}

// NewWriter starts a manifest on w. It fails when the schema or specs
// cannot be typed. Nothing is written to w before the first batch is
// encoded or Close is called: the Parquet settings wait until the
// manifest's size is known (see start).
func NewWriter(w io.Writer, opts WriterOptions) (*Writer, error) {
	if opts.BatchRows <= 0 {
		opts.BatchRows = 16384
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = 128 * 1024
	}
	lay, err := layoutFor(opts.Schema, opts.Specs, opts.RowLineage)
	if err != nil {
		return nil, err
	}
	sc := lay.schema
	pool := &writerAlloc{}
	wr := &Writer{opts: opts, out: w, lay: lay, alloc: pool, schema: sc, bld: array.NewRecordBuilder(pool, sc),
		statsIdx: lay.statsIdx, partIDs: lay.partIDs}
	wr.batches = make(chan batch, 1)
	wr.encoded = make(chan error, 1)
	go wr.encode()
	for i, id := range lay.topIDs {
		if id >= 0 {
			if id >= len(wr.byID) {
				wr.byID = slices.Grow(wr.byID, id+1-len(wr.byID))[:id+1]
			}
			wr.byID[id] = wr.bld.Field(i)
		}
	}
	if lay.statsCol >= 0 {
		wr.statsB = wr.bld.Field(lay.statsCol).(*array.StructBuilder)
		wr.planStats()
	}
	return wr, nil
}

// smallManifestRows is the most rows a manifest may have to be written
// with snappy rather than zstd: below it the column chunks hold a few
// values each, zstd's frames cost more than they save and its encoder is
// a large share of the write (as for roots, below). Measured on the
// 100-column score leaf: snappy is smaller up to about 30 rows (20 rows:
// 109.7 KB against 112.6 KB) and zstd beyond (100 rows: 133 KB against 173).
const smallManifestRows = 24

// start opens the Parquet file once the manifest's size is known: small
// says that all of its rows are in the first batch and there are at most
// smallManifestRows of them. It writes the magic and keeps the key-value
// metadata for the footer.
func (w *Writer) start(small bool) error {
	props := writerProps(w.lay, w.opts.RowGroupRows, w.alloc, w.opts.Content, small)
	fw, err := pqarrow.NewFileWriter(w.schema, w.out, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(w.alloc)))
	if err != nil {
		return err
	}
	kv := [][2]string{{"format-version", "4"}, {"schema-id", strconv.Itoa(w.opts.SchemaID)}}
	switch w.opts.Content {
	case ContentDataLeaf:
		kv = append(kv, [2]string{"content", "data"})
	case ContentDeleteLeaf:
		kv = append(kv, [2]string{"content", "equality-deletes"})
	}
	if w.lay.schemaJSON != "" {
		kv = append(kv, [2]string{"iceberg.schema", w.lay.schemaJSON})
	}
	for _, p := range kv {
		if err := fw.AppendKeyValueMetadata(p[0], p[1]); err != nil {
			return err
		}
	}
	w.fw = fw
	return nil
}

// writerProps are the Parquet settings of a manifest of the given kind
// and layout; small is start's.
func writerProps(lay *layout, rowGroupRows int, mem memory.Allocator, content Content, small bool) *parquet.WriterProperties {
	codec := compress.Codecs.Zstd
	if content == ContentRoot || small {
		// A root holds few rows (its leaves and at most 64 data rows) and
		// every commit rewrites it: its column chunks are a few values
		// each, where zstd's frames cost more than they save and its
		// encoder most of the write. Measured on issue 24's 100-column
		// root of 20 rows: zstd 111.8 KB, snappy 105.8 KB.
		codec = compress.Codecs.Snappy
	}
	props := []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCompression(codec),
		parquet.WithStoreDecimalAsInteger(true),
		// Manifest columns are mostly unique per row (paths, bounds, ids):
		// dictionaries cost time and rarely save space.
		parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(int64(rowGroupRows)),
		// Small pages: the encoder's page buffers come from a pool the
		// garbage collector empties, and regrowing them is most of what a
		// wide leaf allocates (measured: 32 KiB ≈ 1.6 KB/row, 1 MiB ≈ 14).
		parquet.WithDataPageSize(32 << 10),
		// No Parquet column statistics (chunk and page min/max and null
		// counts): on a wide manifest they are a large share of the
		// footer (one set per stats member of every table field, hundreds
		// of columns), and no manifest reader (this package, pyarrow,
		// DuckDB) prunes a manifest's rows by them: pruning
		// is by content_stats. Measured on a 100-column root of 2 rows:
		// 140 KB with them, 102 KB without. The page index stays off (the
		// default) for the same reason.
		parquet.WithStats(false),
	}
	return parquet.NewWriterProperties(append(props, lay.delta...)...)
}

// deltaStatsColumns makes the long members of content_stats (counts and
// long bounds, most of a wide leaf) DELTA_BINARY_PACKED: they shrink
// before zstd sees them, and zstd is most of the encoding time. Measured
// on BenchmarkLeafWrite: a fifth less CPU per entry, no slower to read.
// Readers of Parquet (pyarrow, parquet-java, DuckDB, Trino) all decode it.
// Encodings are set by column path, so a stats column whose name another
// one shares (a field "a_b" beside a nested a.b) keeps the default.
func deltaStatsColumns(sc *arrow.Schema) []parquet.WriterProperty {
	var out []parquet.WriterProperty
	for _, f := range sc.Fields() {
		if fieldID(f) != IDContentStats {
			continue
		}
		names := map[string]int{}
		for _, c := range f.Type.(*arrow.StructType).Fields() {
			names[c.Name]++
		}
		for _, c := range f.Type.(*arrow.StructType).Fields() {
			if names[c.Name] > 1 {
				continue
			}
			for _, m := range c.Type.(*arrow.StructType).Fields() {
				if m.Type.ID() == arrow.INT64 {
					path := f.Name + "." + c.Name + "." + m.Name
					out = append(out, parquet.WithEncodingFor(path, parquet.Encodings.DeltaBinaryPacked))
				}
			}
		}
	}
	return out
}

// planStats fetches the builders of each child of content_stats.
func (w *Writer) planStats() {
	for j, shape := range w.lay.stats {
		sc := statsChild{tableField: shape.tableField, metrics: shape.metrics, long: shape.long,
			sb: w.statsB.FieldBuilder(j).(*array.StructBuilder)}
		for k := range shape.metrics {
			sc.members = append(sc.members, sc.sb.FieldBuilder(k))
		}
		sc.lower, sc.upper = sc.members[shape.lower], sc.members[shape.upper]
		w.statsPlan = append(w.statsPlan, sc)
	}
	w.rowStats = make([]*FieldStats, len(w.statsPlan))
}

// Schema returns the Arrow schema being written.
func (w *Writer) Schema() *arrow.Schema { return w.schema }

// Rows returns how many rows were written.
func (w *Writer) Rows() int { return w.total }

func (w *Writer) validate(tf *TrackedFile) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidRow, tf.Location, fmt.Sprintf(format, args...))
	}
	ct := tf.ContentType
	switch w.opts.Content {
	case ContentDataLeaf:
		if ct != ContentData {
			return bad("a data leaf holds content_type 0 only, got %d", ct)
		}
	case ContentDeleteLeaf:
		if ct != ContentEqualityDeletes {
			return bad("a delete leaf holds content_type 2 only, got %d", ct)
		}
	case ContentRoot:
		if tf.Tracking.SnapshotID == nil || tf.Tracking.SequenceNumber == nil {
			return bad("root rows need explicit snapshot_id and sequence_number")
		}
		// A data row in the root has no parent to inherit a row id from.
		if ct == ContentData && w.opts.RowLineage && tf.Tracking.FirstRowID == nil {
			return bad("data rows in the root need an explicit first_row_id")
		}
	}
	switch ct {
	case ContentData, ContentEqualityDeletes, ContentDataManifest, ContentDeleteManifest:
	default:
		return bad("content_type %d is not written in v4", ct)
	}
	isManifest := ct == ContentDataManifest || ct == ContentDeleteManifest
	if isManifest != (tf.ManifestInfo != nil) {
		return bad("manifest_info is required for, and only for, manifest rows")
	}
	if mi := tf.ManifestInfo; mi != nil {
		n, err := mi.DVCardinality()
		if err != nil {
			return bad("manifest_info.dv: %v", err)
		}
		w.rowDVCard = n
	}
	if tf.DeletionVector != nil && ct != ContentData {
		return bad("deletion_vector only on data rows")
	}
	if (ct == ContentEqualityDeletes) != (len(tf.EqualityIDs) > 0) {
		return bad("equality_ids are required for, and only for, equality deletes")
	}
	if len(tf.ColumnFiles) > 0 && ct != ContentData {
		return bad("column_files only on data rows")
	}
	if len(tf.ColumnFiles) > 0 && tf.Tracking.LatestColumnFileSnapshotID == nil {
		return bad("column_files need latest_column_file_snapshot_id")
	}
	for _, cf := range tf.ColumnFiles {
		if len(cf.FieldIDs) == 0 {
			return bad("column file %s has no field ids", cf.Location)
		}
		ids := slices.Clone(cf.FieldIDs)
		slices.Sort(ids)
		if len(slices.Compact(ids)) != len(cf.FieldIDs) {
			return bad("column file %s repeats a field id", cf.Location)
		}
	}
	if !isManifest && (tf.Tracking.DeletedPositions != nil || tf.Tracking.ReplacedPositions != nil) {
		return bad("deleted/replaced positions only on manifest rows")
	}
	if err := w.checkPartition(tf.Partition); err != nil {
		return bad("%v", err)
	}
	if err := w.checkStats(tf.ContentStats); err != nil {
		return bad("%v", err)
	}
	return nil
}

// checkPartition reports whether appendPartition would take values whole.
func (w *Writer) checkPartition(values map[int]any) error {
	b := w.col(IDPartition)
	if b == nil {
		if len(values) > 0 {
			return errors.New("partition values but the table has no partition fields")
		}
		return nil
	}
	sb := b.(*array.StructBuilder)
	known := 0
	for i, id := range w.partIDs {
		v, ok := values[id]
		if !ok {
			continue
		}
		known++
		if err := checkValue(sb.FieldBuilder(i), v); err != nil {
			return fmt.Errorf("partition field %d: %v", id, err)
		}
	}
	if known != len(values) {
		return errors.New("partition values name fields outside the table's specs")
	}
	return nil
}

// checkStats reports whether the row's stats fit the stats columns and,
// when they do, unboxes them into the next row of cells and keeps the
// FieldStats in w.rowStats for appendRow. Nothing is committed here: the
// cells become the row's only when appendRow counts it, so a refused row
// leaves nothing behind. Each stats column is looked up in the map:
// measured faster than ranging over the map.
func (w *Writer) checkStats(stats map[int]*FieldStats) error {
	width := len(w.statsPlan)
	if width == 0 {
		if len(stats) > 0 {
			return errors.New("stats but the manifest has no stats column")
		}
		return nil
	}
	if w.pending == w.cellRows {
		w.growCells()
	}
	r, stride := w.pending, w.cellRows
	if len(stats) == 0 {
		for i := range w.statsPlan {
			w.cells[i*stride+r] = statCell{}
		}
		clear(w.rowStats)
		return nil
	}
	seen := 0
	for i := range w.statsPlan {
		plan := &w.statsPlan[i]
		fs, ok := stats[plan.tableField]
		if ok {
			seen++
		}
		w.rowStats[i] = fs
		if err := w.cells[i*stride+r].fill(plan, fs); err != nil {
			clear(w.rowStats)
			return fmt.Errorf("stats of field %d: %v", plan.tableField, err)
		}
	}
	if seen != len(stats) {
		for fid := range stats {
			if _, ok := w.statsIdx[fid]; !ok {
				return fmt.Errorf("stats for field %d, which has no stats column", fid)
			}
		}
	}
	return nil
}

// Write appends one row. It returns ErrInvalidRow (nothing written) for a
// row that breaks the rules, or the encoder's error. Nothing of tf is
// kept: the caller may reuse it as soon as Write returns.
func (w *Writer) Write(tf *TrackedFile) error {
	if w.closed {
		return errors.New("v4manifest: write after close")
	}
	if w.broken != nil {
		return w.broken
	}
	if err := w.validate(tf); err != nil {
		return err
	}
	if err := w.appendRow(tf); err != nil {
		w.broken = fmt.Errorf("v4manifest: row %s half written: %w", tf.Location, err)
		return w.broken
	}
	w.rows++
	w.total++
	if w.rows >= w.opts.BatchRows {
		return w.flush(true)
	}
	return nil
}

// batch is one batch of rows for the encoder; whole says it is the whole
// manifest.
type batch struct {
	rec   arrow.RecordBatch
	whole bool
}

// encode writes batches into the Parquet file, starting a new row group
// when the current one is full. It stops at the first error and drains.
// A manifest that is one batch is written as unbuffered row groups: each
// column chunk goes straight to the file, where a buffered row group
// gives every column its own in-memory sink and copies it over at the
// end (for a small manifest of hundreds of columns, a tenth of the write).
func (w *Writer) encode() {
	var err error
	inGroup := 0
	for b := range w.batches {
		switch {
		case err != nil:
		case b.whole:
			err = w.fw.Write(b.rec)
		default:
			if inGroup >= w.opts.RowGroupRows {
				err = w.fw.NewBufferedRowGroupChecked()
				inGroup = 0
			}
			if err == nil {
				err = w.fw.WriteBuffered(b.rec)
				inGroup += int(b.rec.NumRows())
			}
		}
		b.rec.Release()
	}
	w.encoded <- err
}

func (w *Writer) flush(more bool) error {
	if w.rows == 0 {
		return nil
	}
	whole := false
	if w.fw == nil {
		whole = !more
		if err := w.start(whole && w.total <= smallManifestRows); err != nil {
			w.broken = err
			return err
		}
	}
	w.flushStats()
	w.batches <- batch{rec: w.newRecord(), whole: whole}
	w.rows = 0
	if !more {
		return nil
	}
	// Builders start empty after a batch; once a manifest has filled one
	// batch, sizing the next up front avoids regrowing every buffer. Small
	// manifests (roots, small leaves) never pay for a full batch.
	w.bld.Reserve(w.opts.BatchRows)
	return nil
}

// Close flushes the last rows and writes the footer.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	defer w.alloc.release() // deferred first: runs after the builders are released
	defer w.bld.Release()
	if w.broken == nil {
		_ = w.flush(false) // sets w.broken when it fails
	}
	if w.broken == nil && w.fw == nil { // a manifest without rows
		if err := w.start(true); err != nil {
			w.broken = err
		}
	}
	close(w.batches)
	if err := <-w.encoded; err != nil {
		return err
	}
	if w.broken != nil {
		return w.broken
	}
	return w.fw.Close()
}

func (w *Writer) loc(s string) string {
	if w.opts.TableLocation == "" {
		return s
	}
	return Relativize(w.opts.TableLocation, s)
}

func (w *Writer) col(id int) array.Builder {
	if id < len(w.byID) {
		return w.byID[id]
	}
	return nil
}

func appendOptInt64(b array.Builder, v *int64) {
	if v == nil {
		b.AppendNull()
	} else {
		b.(*array.Int64Builder).Append(*v)
	}
}

func appendOptInt32(b array.Builder, v *int32) {
	if v == nil {
		b.AppendNull()
	} else {
		b.(*array.Int32Builder).Append(*v)
	}
}

func appendBytes(b array.Builder, v []byte) {
	if v == nil {
		b.AppendNull()
	} else {
		b.(*array.BinaryBuilder).Append(v)
	}
}

func appendInt64List(b array.Builder, vs []int64) {
	lb := b.(*array.ListBuilder)
	if vs == nil {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	lb.ValueBuilder().(*array.Int64Builder).AppendValues(vs, nil)
}

func appendInt32List(b array.Builder, vs []int32) {
	lb := b.(*array.ListBuilder)
	if vs == nil {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	lb.ValueBuilder().(*array.Int32Builder).AppendValues(vs, nil)
}

func (w *Writer) appendRow(tf *TrackedFile) error {
	t := tf.Tracking
	tb := w.col(IDTracking).(*array.StructBuilder)
	tb.Append(true)
	tb.FieldBuilder(0).(*array.Int32Builder).Append(int32(t.Status))
	appendOptInt64(tb.FieldBuilder(1), t.SnapshotID)
	appendOptInt64(tb.FieldBuilder(2), t.SequenceNumber)
	appendOptInt64(tb.FieldBuilder(3), t.FileSequenceNumber)
	appendOptInt64(tb.FieldBuilder(4), t.DVSnapshotID)
	appendOptInt64(tb.FieldBuilder(5), t.FirstRowID)
	appendBytes(tb.FieldBuilder(6), t.DeletedPositions)
	appendBytes(tb.FieldBuilder(7), t.ReplacedPositions)
	appendOptInt64(tb.FieldBuilder(8), t.LatestColumnFileSnapshotID)

	w.col(IDContentType).(*array.Int32Builder).Append(int32(tf.ContentType))
	w.col(IDFormatVersion).(*array.Int32Builder).Append(tf.FormatVersion)
	w.col(IDLocation).(*array.StringBuilder).Append(w.loc(tf.Location))
	w.col(IDFileFormat).(*array.StringBuilder).Append(tf.FileFormat)
	w.col(IDRecordCount).(*array.Int64Builder).Append(tf.RecordCount)
	w.col(IDFileSize).(*array.Int64Builder).Append(tf.FileSizeInBytes)
	appendOptInt32(w.col(IDSpecID), tf.SpecID)

	if b := w.col(IDPartition); b != nil {
		if err := w.appendPartition(b.(*array.StructBuilder), tf.Partition); err != nil {
			return err
		}
	} else if len(tf.Partition) > 0 {
		return fmt.Errorf("%w: %s has partition values but the table has no partition fields", ErrInvalidRow, tf.Location)
	}
	if w.statsB != nil {
		if err := w.appendOtherBounds(); err != nil {
			return err
		}
		// The cells checkStats filled become this row's.
		w.statsValid = append(w.statsValid, tf.ContentStats != nil)
		w.pending++
		if w.pending == statsChunk {
			w.flushStats()
		}
	}
	appendOptInt32(w.col(IDSortOrderID), tf.SortOrderID)

	db := w.col(IDDeletionVector).(*array.StructBuilder)
	if dv := tf.DeletionVector; dv == nil {
		db.AppendNull()
	} else {
		db.Append(true)
		db.FieldBuilder(0).(*array.StringBuilder).Append(w.loc(dv.Location))
		db.FieldBuilder(1).(*array.Int64Builder).Append(dv.Offset)
		db.FieldBuilder(2).(*array.Int64Builder).Append(dv.SizeInBytes)
		db.FieldBuilder(3).(*array.Int64Builder).Append(dv.Cardinality)
		appendBytes(db.FieldBuilder(4), dv.KeyMetadata)
	}

	mb := w.col(IDManifestInfo).(*array.StructBuilder)
	if mi := tf.ManifestInfo; mi == nil {
		mb.AppendNull()
	} else {
		mb.Append(true)
		for i, v := range []int32{mi.AddedFiles, mi.ExistingFiles, mi.DeletedFiles, mi.ReplacedFiles, mi.ModifiedFiles} {
			mb.FieldBuilder(i).(*array.Int32Builder).Append(v)
		}
		for i, v := range []int64{mi.AddedRows, mi.ExistingRows, mi.DeletedRows, mi.ReplacedRows, mi.ModifiedRows, mi.MinSequenceNumber} {
			mb.FieldBuilder(5 + i).(*array.Int64Builder).Append(v)
		}
		appendBytes(mb.FieldBuilder(11), mi.DV)
		if mi.DV == nil {
			mb.FieldBuilder(12).AppendNull()
		} else {
			mb.FieldBuilder(12).(*array.Int64Builder).Append(w.rowDVCard)
		}
	}
	appendBytes(w.col(IDKeyMetadata), tf.KeyMetadata)
	appendInt64List(w.col(IDSplitOffsets), tf.SplitOffsets)
	appendInt32List(w.col(IDEqualityIDs), tf.EqualityIDs)

	cb := w.col(IDColumnFiles).(*array.ListBuilder)
	if tf.ColumnFiles == nil {
		cb.AppendNull()
	} else {
		cb.Append(true)
		eb := cb.ValueBuilder().(*array.StructBuilder)
		for _, cf := range tf.ColumnFiles {
			eb.Append(true)
			eb.FieldBuilder(0).(*array.Int32Builder).Append(cf.FormatVersion)
			appendInt32List(eb.FieldBuilder(1), cf.FieldIDs)
			eb.FieldBuilder(2).(*array.StringBuilder).Append(w.loc(cf.Location))
			eb.FieldBuilder(3).(*array.StringBuilder).Append(cf.FileFormat)
			eb.FieldBuilder(4).(*array.Int64Builder).Append(cf.FileSizeInBytes)
			appendBytes(eb.FieldBuilder(5), cf.KeyMetadata)
			appendInt64List(eb.FieldBuilder(6), cf.SplitOffsets)
		}
	}
	return nil
}

func (w *Writer) appendPartition(sb *array.StructBuilder, values map[int]any) error {
	if values == nil {
		sb.AppendNull() // also appends nulls to every child
		return nil
	}
	known := 0
	sb.Append(true)
	for i, id := range w.partIDs {
		v, ok := values[id]
		if ok {
			known++
		}
		if err := appendValue(sb.FieldBuilder(i), v); err != nil {
			return fmt.Errorf("%w: partition field %d: %v", ErrInvalidRow, id, err)
		}
	}
	if known != len(values) {
		return fmt.Errorf("%w: partition values name fields outside the table's specs", ErrInvalidRow)
	}
	return nil
}

// statsChunk is how many rows of stats wait in cells before they go to
// the builders. Small enough that the cells stay in cache (≈ 1 MB for 50
// stats columns), large enough that the per-column appends are bulk.
const statsChunk = 512

// growCells makes room for more pending rows: small manifests (roots)
// never pay for a full chunk.
func (w *Writer) growCells() {
	rows := min(max(16, 2*w.cellRows), statsChunk)
	cells := make([]statCell, rows*len(w.statsPlan))
	for i := range w.statsPlan {
		copy(cells[i*rows:], w.cells[i*w.cellRows:i*w.cellRows+w.pending])
	}
	w.cells, w.cellRows = cells, rows
}

// statCell is one row's stats for one stats column, unboxed when the row
// is written: the caller's FieldStats are read once, while the row is
// still in cache, and never after Write returns.
type statCell struct {
	lo, hi int64
	counts [3]int64 // value, null, NaN counts
	avg    int32
	has    uint16 // cell* bits
}

const (
	cellPresent uint16 = 1 << iota
	cellLower
	cellUpper
	cellTightKnown
	cellTight
	cellAvg
	cellValueCount // then null and NaN counts: cellValueCount << k
)

// fill unboxes fs (nil: the row has no stats for the column) into c. It
// fails when the bounds do not fit the column's type.
func (c *statCell) fill(plan *statsChild, fs *FieldStats) error {
	*c = statCell{}
	if fs == nil {
		return nil
	}
	c.has = cellPresent
	if plan.long {
		var okLo, okHi bool
		c.lo, okLo = fs.LowerBound.(int64)
		c.hi, okHi = fs.UpperBound.(int64)
		if okLo != (fs.LowerBound != nil) || okHi != (fs.UpperBound != nil) {
			return fmt.Errorf("bounds %v (%T), %v (%T) are not longs", fs.LowerBound, fs.LowerBound, fs.UpperBound, fs.UpperBound)
		}
		if okLo {
			c.has |= cellLower
		}
		if okHi {
			c.has |= cellUpper
		}
	} else {
		// Appended by appendOtherBounds once the whole row is accepted.
		if err := checkValue(plan.lower, fs.LowerBound); err != nil {
			return err
		}
		if err := checkValue(plan.upper, fs.UpperBound); err != nil {
			return err
		}
	}
	if fs.TightBounds != nil {
		c.has |= cellTightKnown
		if *fs.TightBounds {
			c.has |= cellTight
		}
	}
	for k, p := range [3]*int64{fs.ValueCount, fs.NullValueCount, fs.NaNValueCount} {
		if p != nil {
			c.counts[k] = *p
			c.has |= cellValueCount << k
		}
	}
	if fs.AvgValueSizeInBytes != nil {
		c.avg = *fs.AvgValueSizeInBytes
		c.has |= cellAvg
	}
	return nil
}

// appendOtherBounds appends the bounds that are not longs of the row
// checkStats accepted. They were type-checked there, so an error is a bug.
func (w *Writer) appendOtherBounds() error {
	for i := range w.statsPlan {
		plan := &w.statsPlan[i]
		if plan.long {
			continue
		}
		var lo, hi any
		if fs := w.rowStats[i]; fs != nil {
			lo, hi = fs.LowerBound, fs.UpperBound
		}
		if err := appendValue(plan.lower, lo); err != nil {
			return fmt.Errorf("%w: stats of field %d: %v", ErrInvalidRow, plan.tableField, err)
		}
		if err := appendValue(plan.upper, hi); err != nil {
			return fmt.Errorf("%w: stats of field %d: %v", ErrInvalidRow, plan.tableField, err)
		}
	}
	clear(w.rowStats) // keep no caller's FieldStats
	return nil
}

// flushStats appends the pending rows' content_stats, one column at a
// time: row by row, each row would touch a value and a validity buffer of
// every stats member (hundreds for a wide table), and the builders' cache
// misses would dominate the writer's time. Each column's cells are read
// into scratch slices per member, which then go to the builders in bulk.
func (w *Writer) flushStats() {
	if w.pending == 0 {
		return
	}
	w.batchValid = append(w.batchValid, w.statsValid...)
	c := &w.scratch
	for i := range w.statsPlan {
		plan := &w.statsPlan[i]
		cells := w.cells[i*w.cellRows : i*w.cellRows+w.pending]
		c.valid = resize(c.valid, len(cells))
		for r := range cells {
			c.valid[r] = cells[r].has&cellPresent != 0
		}
		plan.valid = append(plan.valid, c.valid...)
		for j, off := range plan.metrics {
			c.appendMember(cells, plan, plan.members[j], off)
		}
	}
	w.statsValid, w.pending = w.statsValid[:0], 0
}

// statsColumn is scratch for flushStats: one member of one stats column
// at a time, as values and validity.
type statsColumn struct {
	valid, ok []bool
	i64       []int64
	i32       []int32
	bools     []bool
}

// appendMember appends member off of cells (one stats column) to mb.
// Bounds that are not longs were appended as their rows came.
func (c *statsColumn) appendMember(cells []statCell, plan *statsChild, mb array.Builder, off int) {
	n := len(cells)
	c.ok = resize(c.ok, n)
	switch off {
	case offLowerBound, offUpperBound:
		if !plan.long {
			return
		}
		c.i64 = resize(c.i64, n)
		for r := range cells {
			if off == offLowerBound {
				c.i64[r], c.ok[r] = cells[r].lo, cells[r].has&cellLower != 0
			} else {
				c.i64[r], c.ok[r] = cells[r].hi, cells[r].has&cellUpper != 0
			}
		}
		mb.(*array.Int64Builder).AppendValues(c.i64, c.ok)
	case offTightBounds:
		c.bools = resize(c.bools, n)
		for r := range cells {
			c.bools[r], c.ok[r] = cells[r].has&cellTight != 0, cells[r].has&cellTightKnown != 0
		}
		mb.(*array.BooleanBuilder).AppendValues(c.bools, c.ok)
	case offValueCount, offNullCount, offNaNCount:
		k := off - offValueCount
		c.i64 = resize(c.i64, n)
		for r := range cells {
			c.i64[r], c.ok[r] = cells[r].counts[k], cells[r].has&(cellValueCount<<k) != 0
		}
		mb.(*array.Int64Builder).AppendValues(c.i64, c.ok)
	case offAvgSize:
		c.i32 = resize(c.i32, n)
		for r := range cells {
			c.i32[r], c.ok[r] = cells[r].avg, cells[r].has&cellAvg != 0
		}
		mb.(*array.Int32Builder).AppendValues(c.i32, c.ok)
	}
}

// resize returns s with length n, reusing its array when large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// newRecord takes the batch out of the builders. content_stats is put
// together by statsArray; the other columns come from their builders.
func (w *Writer) newRecord() arrow.RecordBatch {
	cols := make([]arrow.Array, len(w.lay.topIDs))
	for i := range cols {
		if i == w.lay.statsCol {
			cols[i] = w.statsArray()
		} else {
			cols[i] = w.bld.Field(i).NewArray()
		}
	}
	rec := array.NewRecordBatch(w.schema, cols, int64(w.rows))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// statsArray assembles the batch's content_stats column from its members'
// arrays and the validity kept aside, with the struct types of the cached
// layout. A StructBuilder would rebuild its type, and every child's, for
// each array it makes: hundreds of struct types and field-metadata copies
// per batch of a wide table, a tenth of a small manifest's write.
func (w *Writer) statsArray() arrow.Array {
	st := w.schema.Field(w.lay.statsCol).Type.(*arrow.StructType)
	n := len(w.batchValid)
	kids := make([]arrow.ArrayData, len(w.statsPlan))
	for j := range w.statsPlan {
		plan := &w.statsPlan[j]
		// A fresh slice per child: the array data keeps it.
		members := make([]arrow.ArrayData, 0, len(plan.members))
		for _, mb := range plan.members {
			a := mb.NewArray()
			members = append(members, a.Data())
			a.Data().Retain()
			a.Release()
		}
		kids[j] = w.structData(st.Field(j).Type, plan.valid, members)
		for _, m := range members {
			m.Release()
		}
		plan.valid = plan.valid[:0]
	}
	top := w.structData(st, w.batchValid, kids)
	for _, k := range kids {
		k.Release()
	}
	w.batchValid = w.batchValid[:0]
	out := array.MakeFromData(top)
	top.Release()
	if out.Len() != n {
		panic("v4manifest: content_stats out of step") // a bug: validity and members disagree
	}
	return out
}

// structData is a struct of type t over children, null where valid is
// false. The caller keeps its references to the children.
func (w *Writer) structData(t arrow.DataType, valid []bool, children []arrow.ArrayData) arrow.ArrayData {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	var bitmap *memory.Buffer
	if nulls > 0 {
		bitmap = memory.NewResizableBuffer(w.alloc)
		bitmap.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
		bits := bitmap.Bytes()
		clear(bits)
		for i, v := range valid {
			if v {
				bitutil.SetBit(bits, i)
			}
		}
	}
	d := array.NewData(t, len(valid), []*memory.Buffer{bitmap}, children, nulls, 0)
	if bitmap != nil {
		bitmap.Release()
	}
	return d
}
