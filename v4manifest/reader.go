package v4manifest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// ErrMalformed is returned when the file is not a readable v4 manifest (or
// the manifest deletion vector of the root row it is read for is not a
// readable bitmap).
var ErrMalformed = errors.New("v4manifest: malformed manifest")

// ReaderOptions configure a manifest reader.
type ReaderOptions struct {
	// Columns are the top-level field ids to read (nil reads all).
	// content_type is always read.
	Columns []int
	// StatsFields, when not nil, narrows content_stats (if read at all) to
	// the stats of these table field ids: a wide table's stats are most of
	// a leaf's columns, and a plan that filters on one field and returns
	// no counts needs that field's only. Other fields' stats come back
	// absent, as if never collected. Empty reads no stats.
	StatsFields []int
	// TableLocation resolves relative locations (kept as stored when empty).
	TableLocation string
	// InheritFrom is the root row that references this leaf: null snapshot
	// ids, sequence numbers and first row ids inherit from it, rows get
	// their position (TrackedFile.Pos), and rows at the positions of its
	// manifest deletion vector (manifest_info.dv) are left out: they are
	// not live in the root's snapshot.
	InheritFrom *TrackedFile
	// IncludeMasked keeps the rows the manifest deletion vector leaves out
	// (change detection reads the rows a snapshot replaced).
	IncludeMasked bool
	// Positions, when set (with InheritFrom), limits the rows returned to
	// those at these positions; the others are decoded only as far as
	// inheritance needs, which is most of the saving on a wide leaf.
	Positions map[int64]bool
	// BatchSize is the number of rows decoded at a time (default 8192).
	BatchSize int
	// Footer is the footer of this same file from an earlier reader
	// (Reader.Footer); nil parses it.
	Footer *Footer
}

// Footer is a manifest's parsed Parquet footer. Manifests are never
// rewritten in place, so one Footer serves every later reader of the same
// file, which then skips parsing it: on a wide table's manifest (hundreds
// of stats columns) that parse is milliseconds of every open. A Footer is
// read-only and safe to share between goroutines.
type Footer struct {
	md *metadata.FileMetaData
}

// Reader reads TrackedFile rows from a Parquet manifest.
type Reader struct {
	pf   *file.Reader
	fr   *pqarrow.FileReader
	opts ReaderOptions
	cols []int
}

// NewReader opens a manifest. ErrMalformed when it is not Parquet.
func NewReader(r parquet.ReaderAtSeeker, opts ReaderOptions) (rd *Reader, err error) {
	defer recoverAs(&err)
	if opts.BatchSize <= 0 {
		opts.BatchSize = 8192
	}
	// Page and array buffers come from the pool: every column of a wide
	// manifest gets its own, and none outlives its batch (decoded rows copy
	// what they keep, strings included).
	readOpts := []file.ReadOption{file.WithReadProps(parquet.NewReaderProperties(bufferPool))}
	if opts.Footer != nil {
		readOpts = append(readOpts, file.WithMetadata(opts.Footer.md))
	}
	pf, err := file.NewParquetReader(r, readOpts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	// Manifests carry no page index. Unless told which row groups will need
	// one, the Parquet reader works that out again for every column it
	// opens, over every column of the row group: quadratic in the columns,
	// milliseconds on a wide leaf. Saying none are needed makes it a lookup.
	groups := make([]int32, pf.NumRowGroups())
	for i := range groups {
		groups[i] = int32(i)
	}
	if err := pf.GetPageIndexReader().WillNeed(groups, []int32{0}, metadata.PageIndexSelection{}); err != nil {
		pf.Close()
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	// The column readers reserve a whole batch per column up front: on a
	// leaf smaller than a batch (most are) with hundreds of stats columns
	// that was most of what a read allocated.
	batch := min(int64(opts.BatchSize), max(pf.NumRows(), 1))
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, bufferPool)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	rd = &Reader{pf: pf, fr: fr, opts: opts}
	want := map[int]bool{}
	if opts.Columns != nil {
		for _, c := range append(opts.Columns, IDContentType) {
			want[c] = true
		}
	}
	var stats map[int]bool
	if opts.StatsFields != nil {
		stats = make(map[int]bool, len(opts.StatsFields))
		for _, id := range opts.StatsFields {
			stats[id] = true
		}
	}
	sch := pf.MetaData().Schema
	for c := 0; c < sch.NumColumns(); c++ {
		root := sch.ColumnRoot(c)
		if opts.Columns != nil && !want[int(root.FieldID())] {
			continue
		}
		if stats != nil && root.FieldID() == IDContentStats && !stats[statsFieldOf(sch.Column(c).SchemaNode(), root)] {
			continue
		}
		rd.cols = append(rd.cols, c)
	}
	return rd, nil
}

// statsFieldOf is the table field id whose stats the content_stats leaf
// column n belongs to (its ancestor just below root), or -1.
func statsFieldOf(n, root schema.Node) int {
	for n != nil && n.Parent() != nil && n.Parent() != root {
		n = n.Parent()
	}
	if n == nil || n.Parent() != root {
		return -1
	}
	id, ok := FieldForStatsBase(int(n.FieldID()))
	if !ok {
		return -1
	}
	return id
}

// recoverAs turns a panic inside the Parquet decoder into ErrMalformed: a
// corrupt file must never bring the caller down.
func recoverAs(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%w: %v", ErrMalformed, p)
	}
}

// Footer returns the file's parsed footer, for ReaderOptions.Footer of
// later readers of the same file.
func (r *Reader) Footer() *Footer {
	md := r.pf.MetaData()
	md.WriterVersion() // set once here: it is computed lazily, and shared readers would race on it
	return &Footer{md: md}
}

// FooterSize is the size of the file's footer as stored, in bytes.
func (r *Reader) FooterSize() int { return r.pf.MetaData().Size() }

// NumRows returns the row count from the footer.
func (r *Reader) NumRows() int64 { return r.pf.NumRows() }

// Metadata returns the file's key/value metadata (format-version, content,
// schema-id, ...).
func (r *Reader) Metadata() map[string]string {
	out := map[string]string{}
	kv := r.pf.MetaData().KeyValueMetadata()
	for i, k := range kv.Keys() {
		out[k] = kv.Values()[i]
	}
	return out
}

// Close releases the file.
func (r *Reader) Close() error { return r.pf.Close() }

// All reads every row.
func (r *Reader) All(ctx context.Context) ([]TrackedFile, error) {
	var out []TrackedFile
	err := r.Each(ctx, func(tf *TrackedFile) error {
		out = append(out, *tf)
		return nil
	})
	return out, err
}

// Each streams the rows to fn in file order. The *TrackedFile is reused
// between calls: copy what you keep.
func (r *Reader) Each(ctx context.Context, fn func(*TrackedFile) error) (err error) {
	defer recoverAs(&err)
	if len(r.cols) == 0 {
		return fmt.Errorf("%w: no readable columns", ErrMalformed)
	}
	rr, err := r.fr.GetRecordReader(ctx, r.cols, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	defer rr.Release()
	var inh *inheritState
	var masked map[int64]bool
	if r.opts.InheritFrom != nil {
		inh = newInheritState(*r.opts.InheritFrom)
		if masked, err = r.opts.InheritFrom.MaskedPositions(); err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
	}
	var tf TrackedFile
	pos := int64(-1)
	for rr.Next() {
		rec := rr.RecordBatch()
		dec, err := newDecoder(rec)
		if err != nil {
			return err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			tf = TrackedFile{}
			pos++
			if inh != nil && r.opts.Positions != nil && !r.opts.Positions[pos] {
				if err := dec.head(i, &tf); err != nil {
					return err
				}
				inh.apply(&tf)
				continue
			}
			if err := dec.row(i, &tf); err != nil {
				return err
			}
			if r.opts.TableLocation != "" {
				resolveLocations(r.opts.TableLocation, &tf)
			}
			if inh != nil {
				// Masked rows still take part in inheritance: first row
				// ids are assigned over the leaf as written.
				inh.apply(&tf)
				tf.Pos = pos
				if masked[pos] && !r.opts.IncludeMasked {
					continue
				}
			}
			if err := fn(&tf); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return ctx.Err()
}

func resolveLocations(table string, tf *TrackedFile) {
	if tf.Location != "" {
		tf.Location = Resolve(table, tf.Location)
	}
	if tf.DeletionVector != nil {
		tf.DeletionVector.Location = Resolve(table, tf.DeletionVector.Location)
	}
	for i := range tf.ColumnFiles {
		tf.ColumnFiles[i].Location = Resolve(table, tf.ColumnFiles[i].Location)
	}
}

// inheritState applies Inherit row by row while streaming.
type inheritState struct {
	root TrackedFile
	next *int64
}

func newInheritState(root TrackedFile) *inheritState {
	s := &inheritState{root: root}
	if root.Tracking.FirstRowID != nil {
		s.next = ptr(*root.Tracking.FirstRowID)
	}
	return s
}

func (s *inheritState) apply(tf *TrackedFile) {
	rows := []TrackedFile{*tf}
	root := s.root
	root.Tracking.FirstRowID = s.next
	Inherit(root, rows)
	if tf.ContentType == ContentData && tf.Tracking.FirstRowID == nil && s.next != nil {
		*s.next += tf.RecordCount
	}
	*tf = rows[0]
}

// decoder maps the columns of one record batch to TrackedFile fields. The
// field-id lookups happen once per batch, not per row.
type decoder struct {
	cols                     map[int]arrow.Array
	tracking, dv, mi, cfElem map[int]arrow.Array
	partIDs                  []int
	stats                    []statsCols
}

type statsCols struct {
	tableField int
	arr        *array.Struct
	metrics    []statsMetric
}

// statsMetric is one member of a stats struct: its metric offset and array.
type statsMetric struct {
	off int
	arr arrow.Array
}

// children maps the field ids of a struct array's children to the arrays.
func children(a arrow.Array) map[int]arrow.Array {
	s, ok := a.(*array.Struct)
	if !ok {
		return nil
	}
	m := map[int]arrow.Array{}
	for i, f := range s.DataType().(*arrow.StructType).Fields() {
		m[fieldID(f)] = s.Field(i)
	}
	return m
}

func newDecoder(rec arrow.RecordBatch) (*decoder, error) {
	d := &decoder{cols: map[int]arrow.Array{}}
	for i, f := range rec.Schema().Fields() {
		d.cols[fieldID(f)] = rec.Column(i)
	}
	if _, ok := d.cols[IDContentType]; !ok {
		return nil, fmt.Errorf("%w: no content_type column", ErrMalformed)
	}
	d.tracking = children(d.cols[IDTracking])
	d.dv = children(d.cols[IDDeletionVector])
	d.mi = children(d.cols[IDManifestInfo])
	if l, ok := d.cols[IDColumnFiles].(*array.List); ok {
		d.cfElem = children(l.ListValues())
	}
	if p, ok := d.cols[IDPartition].(*array.Struct); ok {
		for _, f := range p.DataType().(*arrow.StructType).Fields() {
			d.partIDs = append(d.partIDs, fieldID(f))
		}
	}
	if cs, ok := d.cols[IDContentStats].(*array.Struct); ok {
		for j, f := range cs.DataType().(*arrow.StructType).Fields() {
			base := fieldID(f)
			tableField, ok := FieldForStatsBase(base)
			fa, isStruct := cs.Field(j).(*array.Struct)
			if !ok || !isStruct {
				continue // not a stats struct we know: ignored by id
			}
			sc := statsCols{tableField: tableField, arr: fa}
			for k, m := range fa.DataType().(*arrow.StructType).Fields() {
				sc.metrics = append(sc.metrics, statsMetric{off: fieldID(m) - base, arr: fa.Field(k)})
			}
			d.stats = append(d.stats, sc)
		}
	}
	return d, nil
}

func optInt64(a arrow.Array, i int) *int64 {
	if a == nil || a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return ptr(a.Value(i))
	case *array.Int32:
		return ptr(int64(a.Value(i)))
	}
	return nil
}

func optInt32(a arrow.Array, i int) *int32 {
	if a == nil || a.IsNull(i) {
		return nil
	}
	if a, ok := a.(*array.Int32); ok {
		return ptr(a.Value(i))
	}
	return nil
}

func int64At(a arrow.Array, i int) (int64, error) {
	v := optInt64(a, i)
	if v == nil {
		return 0, fmt.Errorf("%w: required long is null or missing", ErrMalformed)
	}
	return *v, nil
}

func int32At(a arrow.Array, i int) (int32, error) {
	v := optInt32(a, i)
	if v == nil {
		return 0, fmt.Errorf("%w: required int is null or missing", ErrMalformed)
	}
	return *v, nil
}

func strAt(a arrow.Array, i int) string {
	if s, ok := a.(*array.String); ok && !s.IsNull(i) {
		return strings.Clone(s.Value(i)) // the array's buffer goes back to the pool
	}
	return ""
}

func bytesAt(a arrow.Array, i int) []byte {
	if b, ok := a.(*array.Binary); ok && !b.IsNull(i) {
		return append([]byte{}, b.Value(i)...)
	}
	return nil
}

func listAt[T any](a arrow.Array, i int, get func(arrow.Array, int) T) []T {
	l, ok := a.(*array.List)
	if !ok || l.IsNull(i) {
		return nil
	}
	start, end := l.ValueOffsets(i)
	out := make([]T, 0, end-start)
	for j := start; j < end; j++ {
		out = append(out, get(l.ListValues(), int(j)))
	}
	return out
}

func int64Val(a arrow.Array, j int) int64 { v, _ := int64At(a, j); return v }
func int32Val(a arrow.Array, j int) int32 { v, _ := int32At(a, j); return v }

// row decodes row i into tf.
func (d *decoder) row(i int, tf *TrackedFile) error {
	if err := d.head(i, tf); err != nil {
		return err
	}
	return d.rest(i, tf)
}

// head decodes what inheritance needs of row i: content type, tracking and
// record count.
func (d *decoder) head(i int, tf *TrackedFile) error {
	ct, err := int32At(d.cols[IDContentType], i)
	if err != nil {
		return err
	}
	tf.ContentType = ContentType(ct)
	if a, ok := d.cols[IDTracking].(*array.Struct); ok && !a.IsNull(i) {
		c := d.tracking
		st, err := int32At(c[IDStatus], i)
		if err != nil {
			return err
		}
		tf.Tracking = Tracking{
			Status:                     Status(st),
			SnapshotID:                 optInt64(c[IDSnapshotID], i),
			SequenceNumber:             optInt64(c[IDSequenceNumber], i),
			FileSequenceNumber:         optInt64(c[IDFileSequenceNumber], i),
			DVSnapshotID:               optInt64(c[IDDVSnapshotID], i),
			FirstRowID:                 optInt64(c[IDFirstRowID], i),
			DeletedPositions:           bytesAt(c[IDDeletedPositions], i),
			ReplacedPositions:          bytesAt(c[IDReplacedPositions], i),
			LatestColumnFileSnapshotID: optInt64(c[IDLatestColumnFileSnapshotID], i),
		}
	}
	if a, ok := d.cols[IDRecordCount]; ok {
		if tf.RecordCount, err = int64At(a, i); err != nil {
			return err
		}
	}
	return nil
}

// rest decodes the other fields of row i.
func (d *decoder) rest(i int, tf *TrackedFile) error {
	var err error
	if a, ok := d.cols[IDFormatVersion]; ok {
		if tf.FormatVersion, err = int32At(a, i); err != nil {
			return err
		}
	}
	if a, ok := d.cols[IDLocation]; ok {
		tf.Location = strAt(a, i)
	}
	if a, ok := d.cols[IDFileFormat]; ok {
		tf.FileFormat = strAt(a, i)
	}
	if a, ok := d.cols[IDFileSize]; ok {
		if tf.FileSizeInBytes, err = int64At(a, i); err != nil {
			return err
		}
	}
	tf.SpecID = optInt32(d.cols[IDSpecID], i)
	tf.SortOrderID = optInt32(d.cols[IDSortOrderID], i)
	if a, ok := d.cols[IDPartition].(*array.Struct); ok && !a.IsNull(i) {
		tf.Partition = make(map[int]any, len(d.partIDs))
		for j, id := range d.partIDs {
			v, err := valueAt(a.Field(j), i)
			if err != nil {
				return fmt.Errorf("%w: partition: %v", ErrMalformed, err)
			}
			tf.Partition[id] = v
		}
	}
	if a, ok := d.cols[IDContentStats]; ok && !a.IsNull(i) {
		if tf.ContentStats, err = d.decodeStats(i); err != nil {
			return err
		}
	}
	if a, ok := d.cols[IDDeletionVector]; ok && !a.IsNull(i) {
		c := d.dv
		dv := &DeletionVector{Location: strAt(c[IDDVLocation], i), KeyMetadata: bytesAt(c[IDDVKeyMetadata], i)}
		if dv.Offset, err = int64At(c[IDDVOffset], i); err != nil {
			return err
		}
		if dv.SizeInBytes, err = int64At(c[IDDVSize], i); err != nil {
			return err
		}
		if dv.Cardinality, err = int64At(c[IDDVCardinality], i); err != nil {
			return err
		}
		tf.DeletionVector = dv
	}
	if a, ok := d.cols[IDManifestInfo]; ok && !a.IsNull(i) {
		c := d.mi
		mi := &ManifestInfo{DV: bytesAt(c[IDManifestDV], i)}
		for _, p := range []struct {
			id  int
			dst *int32
		}{{IDAddedFilesCount, &mi.AddedFiles}, {IDExistingFilesCount, &mi.ExistingFiles}, {IDDeletedFilesCount, &mi.DeletedFiles},
			{IDReplacedFilesCount, &mi.ReplacedFiles}, {IDModifiedFilesCount, &mi.ModifiedFiles}} {
			// int (as Java main and Lakehold write) or long (as the spec
			// draft types it) on disk.
			if v := optInt64(c[p.id], i); v != nil {
				if *v < 0 || *v > math.MaxInt32 {
					return fmt.Errorf("%w: manifest_info file count %d (field %d) out of range", ErrMalformed, *v, p.id)
				}
				*p.dst = int32(*v)
			}
		}
		for _, p := range []struct {
			id  int
			dst *int64
		}{{IDAddedRowsCount, &mi.AddedRows}, {IDExistingRowsCount, &mi.ExistingRows}, {IDDeletedRowsCount, &mi.DeletedRows},
			{IDReplacedRowsCount, &mi.ReplacedRows}, {IDModifiedRowsCount, &mi.ModifiedRows}, {IDMinSequenceNumber, &mi.MinSequenceNumber}} {
			if v := optInt64(c[p.id], i); v != nil {
				*p.dst = *v
			}
		}
		if err := checkDVCardinality(mi, c[IDManifestDVCardinality], i); err != nil {
			return err
		}
		tf.ManifestInfo = mi
	}
	tf.KeyMetadata = bytesAt(d.cols[IDKeyMetadata], i)
	tf.SplitOffsets = listAt(d.cols[IDSplitOffsets], i, int64Val)
	tf.EqualityIDs = listAt(d.cols[IDEqualityIDs], i, int32Val)
	if l, ok := d.cols[IDColumnFiles].(*array.List); ok && !l.IsNull(i) {
		el := d.cfElem
		if el == nil {
			return fmt.Errorf("%w: column_files element is not a struct", ErrMalformed)
		}
		start, end := l.ValueOffsets(i)
		tf.ColumnFiles = make([]ColumnFile, 0, end-start)
		for j := int(start); j < int(end); j++ {
			cf := ColumnFile{
				FieldIDs:     listAt(el[IDCFFieldIDs], j, int32Val),
				Location:     strAt(el[IDCFLocation], j),
				FileFormat:   strAt(el[IDCFFileFormat], j),
				KeyMetadata:  bytesAt(el[IDCFKeyMetadata], j),
				SplitOffsets: listAt(el[IDCFSplitOffsets], j, int64Val),
			}
			if cf.FormatVersion, err = int32At(el[IDCFFormatVersion], j); err != nil {
				return err
			}
			if cf.FileSizeInBytes, err = int64At(el[IDCFFileSize], j); err != nil {
				return err
			}
			tf.ColumnFiles = append(tf.ColumnFiles, cf)
		}
	}
	return nil
}

// checkDVCardinality checks dv_cardinality (column col, nil when the file
// has none) against the manifest deletion vector it counts. Files written
// before the field have no column: the count is then computed from the
// vector when asked (ManifestInfo.DVCardinality). Where the column exists
// it must be set exactly when dv is, and equal the vector's count.
func checkDVCardinality(mi *ManifestInfo, col arrow.Array, i int) error {
	if col == nil {
		return nil
	}
	stored := optInt64(col, i) // long per the drafts; int is taken too
	switch {
	case mi.DV == nil && stored == nil:
		return nil
	case mi.DV == nil:
		return fmt.Errorf("%w: manifest_info.dv_cardinality is set without dv", ErrMalformed)
	case stored == nil:
		return fmt.Errorf("%w: manifest_info.dv is set without dv_cardinality", ErrMalformed)
	}
	n, err := mi.DVCardinality()
	if err != nil {
		return fmt.Errorf("%w: manifest_info.dv: %v", ErrMalformed, err)
	}
	if n != *stored {
		return fmt.Errorf("%w: manifest_info.dv_cardinality is %d, the dv holds %d positions", ErrMalformed, *stored, n)
	}
	return nil
}

func (d *decoder) decodeStats(i int) (map[int]*FieldStats, error) {
	out := make(map[int]*FieldStats, len(d.stats))
	// One row's stats come from a few slabs, not an allocation per
	// FieldStats and per count: on a wide leaf that was most of a read's
	// time. Each pointer still has a value of its own.
	slab := make([]FieldStats, len(d.stats))
	counts := make([]int64, 3*len(d.stats))
	small := make([]int32, len(d.stats))
	flags := make([]bool, len(d.stats))
	for k, sc := range d.stats {
		if sc.arr.IsNull(i) {
			continue
		}
		fs := &slab[k]
		var err error
		for _, m := range sc.metrics {
			col := m.arr
			switch m.off {
			case offLowerBound:
				fs.LowerBound, err = valueAt(col, i)
			case offUpperBound:
				fs.UpperBound, err = valueAt(col, i)
			case offTightBounds:
				if b, ok := col.(*array.Boolean); ok && !b.IsNull(i) {
					flags[k] = b.Value(i)
					fs.TightBounds = &flags[k]
				}
			case offValueCount:
				fs.ValueCount = countAt(col, i, &counts[3*k])
			case offNullCount:
				fs.NullValueCount = countAt(col, i, &counts[3*k+1])
			case offNaNCount:
				fs.NaNValueCount = countAt(col, i, &counts[3*k+2])
			case offAvgSize:
				if a, ok := col.(*array.Int32); ok && !a.IsNull(i) {
					small[k] = a.Value(i)
					fs.AvgValueSizeInBytes = &small[k]
				}
			}
			if err != nil {
				return nil, fmt.Errorf("%w: stats of field %d: %v", ErrMalformed, sc.tableField, err)
			}
		}
		out[sc.tableField] = fs
	}
	return out, nil
}

// countAt is optInt64 into dst: dst when element i is set, else nil.
func countAt(a arrow.Array, i int, dst *int64) *int64 {
	if a == nil || a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Int64:
		*dst = a.Value(i)
	case *array.Int32:
		*dst = int64(a.Value(i))
	default:
		return nil
	}
	return dst
}
