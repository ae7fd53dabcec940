package planning

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/scanplan"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/v4manifest"
)

// planBuilder collects a plan's tasks and the delete files they reference,
// each delete file listed once.
type planBuilder struct {
	out     Result
	deletes []eqDelete
	refs    map[int]int // index in deletes → index in out.DeleteFiles
}

// add adds a task with the equality deletes (indexes into b.deletes) that
// apply to it and its deletion vector, listed as a Puffin position-delete
// file as REST planning describes deletion vectors.
func (b *planBuilder) add(t ScanTask, applicable []int) {
	for _, i := range applicable {
		idx, ok := b.refs[i]
		if !ok {
			idx = len(b.out.DeleteFiles)
			b.out.DeleteFiles = append(b.out.DeleteFiles, b.deletes[i].file)
			b.refs[i] = idx
		}
		t.DeleteRefs = append(t.DeleteRefs, idx)
	}
	if dv := t.DeletionVector; dv != nil {
		ref := t.Location
		// The Puffin file's size is not recorded; the blob's end is a
		// lower bound that keeps the content range inside the file.
		size, off, blob := dv.Offset+dv.SizeInBytes, dv.Offset, dv.SizeInBytes
		t.DeleteRefs = append(t.DeleteRefs, len(b.out.DeleteFiles))
		b.out.DeleteFiles = append(b.out.DeleteFiles, DeleteFile{Content: "position-deletes", Location: dv.Location, FileFormat: "puffin",
			SpecID: t.SpecID, PartitionValues: t.PartitionValues, PartitionTypes: t.PartitionTypes, RecordCount: dv.Cardinality,
			FileSizeInBytes: size, ReferencedDataFile: &ref, ContentOffset: &off, ContentSize: &blob})
	}
	b.out.Tasks = append(b.out.Tasks, t)
}

func (b *planBuilder) result() Result {
	if b.out.Tasks == nil {
		b.out.Tasks = []ScanTask{}
	}
	if b.out.DeleteFiles == nil {
		b.out.DeleteFiles = []DeleteFile{}
	}
	return b.out
}

// eqDelete is a live equality-delete file of the planned snapshot.
type eqDelete struct {
	file   DeleteFile
	seq    int64
	specID int32
	part   map[int]any
	global bool // unpartitioned: applies to every partition
}

// eqDeletes reads the live equality deletes of a snapshot: rows of its
// delete leaves and equality-delete rows in the root itself.
func (p *scanPlanV4) eqDeletes(ctx context.Context, snap *table.Snapshot, root []v4manifest.TrackedFile) ([]eqDelete, error) {
	// The delete leaves are read first, several at a time; their deletes
	// then take their root rows' places.
	var leaves []*v4manifest.TrackedFile
	for i := range root {
		if rr := &root[i]; rr.Tracking.Status.Live() && rr.ContentType == v4manifest.ContentDeleteManifest {
			leaves = append(leaves, rr)
		}
	}
	inLeaf := make([][]eqDelete, len(leaves))
	err := p.readLeavesInOrder(ctx, leaves, func(i int, rows []v4manifest.TrackedFile) error {
		for j := range rows {
			if rows[j].Tracking.Status.Live() && rows[j].ContentType == v4manifest.ContentEqualityDeletes {
				inLeaf[i] = append(inLeaf[i], p.eqDelete(&rows[j]))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []eqDelete
	for i := range root {
		rr := &root[i]
		if !rr.Tracking.Status.Live() {
			continue
		}
		switch rr.ContentType {
		case v4manifest.ContentEqualityDeletes:
			out = append(out, p.eqDelete(rr))
		case v4manifest.ContentDeleteManifest:
			out = append(out, inLeaf[0]...)
			inLeaf = inLeaf[1:]
		}
	}
	return out, nil
}

func (p *scanPlanV4) eqDelete(r *v4manifest.TrackedFile) eqDelete {
	d := eqDelete{seq: v4read.Deref(r.Tracking.SequenceNumber), part: r.Partition, global: true}
	if r.SpecID != nil {
		d.specID = *r.SpecID
		if spec := p.st.meta.PartitionSpecByID(int(d.specID)); spec != nil && !spec.IsUnpartitioned() {
			d.global = false
		}
	}
	vals, types := p.partitionTuple(int(d.specID), r.Partition)
	ids := make([]int, len(r.EqualityIDs))
	for i, id := range r.EqualityIDs {
		ids[i] = int(id)
	}
	d.file = DeleteFile{Content: "equality-deletes", Location: r.Location, FileFormat: strings.ToLower(r.FileFormat), SpecID: d.specID,
		PartitionValues: vals, PartitionTypes: types, RecordCount: r.RecordCount, FileSizeInBytes: r.FileSizeInBytes, EqualityIDs: ids}
	return d
}

// applicable lists the equality deletes that apply to data row r: newer
// (higher data sequence number) and global or in r's partition.
func (p *scanPlanV4) applicable(dels []eqDelete, r *v4manifest.TrackedFile) []int {
	if len(dels) == 0 {
		return nil
	}
	seq := v4read.Deref(r.Tracking.SequenceNumber)
	var spec int32
	if r.SpecID != nil {
		spec = *r.SpecID
	}
	var out []int
	for i, d := range dels {
		if d.seq <= seq {
			continue
		}
		if d.global || (d.specID == spec && maps.EqualFunc(d.part, r.Partition, func(a, b any) bool { return reflect.DeepEqual(a, b) })) {
			out = append(out, i)
		}
	}
	return out
}

// planToken is the content of a plan task: everything /tasks needs to
// plan the named leaves again, so that any replica can serve it. It is
// not signed: FetchScanTasks accepts a leaf only when the named snapshot
// of this table references it, and re-checks the caller's access, so a
// forged token can read nothing a plan request could not.
type planToken struct {
	V      int             `json:"v"`
	Table  string          `json:"t"`
	Snap   int64           `json:"s"` // the planned snapshot (its deletes)
	Schema int             `json:"sc"`
	Inc    bool            `json:"i,omitempty"`
	Filter json.RawMessage `json:"f,omitempty"`
	Select []string        `json:"sel,omitempty"`
	// Stats are the request's stats fields; absent (nil) means all.
	Stats   []string    `json:"st"`
	CaseSen bool        `json:"cs"`
	Leaves  []tokenLeaf `json:"l"`
	// Skip are files (relative to the table) that an incremental plan's
	// column-change part already returned.
	Skip []string `json:"k,omitempty"`
}

// tokenLeaf is a leaf by its location relative to the table and the
// snapshot whose root references it.
type tokenLeaf struct {
	Snap int64  `json:"s"`
	Path string `json:"p"`
}

// tokens groups the units into plan tasks of about MaxPlanTasks files.
func (p *scanPlanV4) tokens(units []planUnit) ([]string, error) {
	var out []string
	tok := p.newToken(units)
	n := 0
	for _, u := range units {
		if n > 0 && n+u.estimate() > p.pl.d.MaxPlanTasks {
			out = append(out, tok.encode())
			tok.Leaves, n = nil, 0
		}
		tok.Leaves = append(tok.Leaves, tokenLeaf{Snap: u.Snapshot, Path: v4manifest.Relativize(p.st.location, u.Leaf.Location)})
		n += u.estimate()
	}
	if len(tok.Leaves) > 0 {
		out = append(out, tok.encode())
	}
	return out, nil
}

func (p *scanPlanV4) newToken(units []planUnit) planToken {
	t := planToken{V: 1, Table: p.st.meta.TableUUID().String(), Schema: p.sc.ID, Filter: p.req.Filter, Select: p.req.Select, Stats: p.req.StatsFields, CaseSen: p.req.CaseSensitive}
	if len(units) > 0 {
		t.Inc = units[0].Added
	}
	for _, loc := range slices.Sorted(maps.Keys(p.skip)) {
		t.Skip = append(t.Skip, v4manifest.Relativize(p.st.location, loc))
	}
	if !t.Inc {
		if snap, err := p.snapshot(p.req.SnapshotID); err == nil && snap != nil {
			t.Snap = snap.SnapshotID
		}
	}
	return t
}

func (t planToken) encode() string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

// FetchScanTasks plans one plan task of an earlier PlanScan: the tasks of
// the leaves it names, with their delete files. It re-checks
// table-read-data and fails with 404 NoSuchPlanTaskException when the
// token is malformed, belongs to another table, or names a leaf the named
// snapshot does not reference; 400 reason column-files-unsupported-by-
// client as PlanScan.
func (pl *Planner) FetchScanTasks(ctx context.Context, warehouse string, id ident.Ident, planTask string, columnFilesOK bool) (Result, error) {
	w, md, version, err := pl.planTarget(ctx, warehouse, id)
	if err != nil {
		return Result{}, err
	}
	var tok planToken
	raw, err := base64.RawURLEncoding.DecodeString(planTask)
	if err != nil || json.Unmarshal(raw, &tok) != nil || tok.V != 1 || version < tablemeta.FormatV4 || tok.Table != md.TableUUID().String() {
		return Result{}, errNoPlanTask(id)
	}
	sc := schemaByID(md, tok.Schema)
	if sc == nil {
		return Result{}, errNoPlanTask(id)
	}
	p := &scanPlanV4{pl: pl, w: w, id: id, st: &tableState{meta: md, location: md.Location()}, parts: map[int]*scanplan.Filter{},
		roots: map[int64][]v4manifest.TrackedFile{},
		req:   Request{Filter: tok.Filter, Select: tok.Select, StatsFields: tok.Stats, CaseSensitive: tok.CaseSen, ColumnFilesOK: columnFilesOK}}
	if err := p.bind(sc); err != nil {
		return Result{}, errNoPlanTask(id)
	}
	res, err := p.fetch(ctx, tok)
	res.Residual = residual(tok.Filter)
	return res, err
}

// fetch verifies and plans a token's leaves.
func (p *scanPlanV4) fetch(ctx context.Context, tok planToken) (Result, error) {
	res := &planBuilder{refs: map[int]int{}}
	if len(tok.Skip) > 0 {
		p.skip = map[string]bool{}
		for _, rel := range tok.Skip {
			p.skip[v4manifest.Resolve(p.st.location, rel)] = true
		}
	}
	if !tok.Inc {
		snap := p.st.meta.SnapshotByID(tok.Snap)
		if snap == nil {
			return Result{}, errNoPlanTask(p.id)
		}
		root, err := p.root(ctx, snap)
		if err != nil {
			return Result{}, err
		}
		if res.deletes, err = p.eqDeletes(ctx, snap, root); err != nil {
			return Result{}, err
		}
	}
	// The leaves are verified first and then read several at a time; the
	// error is the one a leaf-by-leaf loop would meet first: a read of a
	// leaf before the first that fails verification, else that one's.
	var units []planUnit
	var verr error
	for _, l := range tok.Leaves {
		u, err := p.verifyLeaf(ctx, l, tok.Inc)
		if err != nil {
			verr = err
			break
		}
		units = append(units, u)
	}
	if err := p.planLeaves(ctx, res, units); err != nil {
		return Result{}, err
	}
	if verr != nil {
		return Result{}, verr
	}
	return res.result(), nil
}

// verifyLeaf finds the live data-manifest row of the leaf in the root of
// the named snapshot: 404 NoSuchPlanTask when there is none.
func (p *scanPlanV4) verifyLeaf(ctx context.Context, l tokenLeaf, inc bool) (planUnit, error) {
	snap := p.st.meta.SnapshotByID(l.Snap)
	if snap == nil || snap.ManifestList == "" {
		return planUnit{}, errNoPlanTask(p.id)
	}
	root, err := p.root(ctx, snap)
	if err != nil {
		return planUnit{}, err
	}
	loc := v4manifest.Resolve(p.st.location, l.Path)
	for i := range root {
		rr := &root[i]
		if rr.Tracking.Status.Live() && rr.ContentType == v4manifest.ContentDataManifest && rr.Location == loc {
			return planUnit{Snapshot: l.Snap, Leaf: rr, Added: inc}, nil
		}
	}
	return planUnit{}, errNoPlanTask(p.id)
}

// PlanStatus answers fetchPlanningResult. Plans are completed synchronously
// and not kept, so no plan is ever pending: after checking
// table-read-data and that the table exists it fails with 404
// NoSuchPlanIdException.
func (pl *Planner) PlanStatus(ctx context.Context, warehouse string, id ident.Ident, _ string) error {
	if err := pl.checkPlanTable(ctx, warehouse, id); err != nil {
		return err
	}
	return fault.New(fault.NoSuchPlanID, "No pending plan for table %s: plans complete synchronously and are not kept", id)
}

// CancelPlan answers cancelPlanning: nothing runs after a plan completes,
// so it succeeds once table-read-data and the table's existence are
// checked (403/404 otherwise).
func (pl *Planner) CancelPlan(ctx context.Context, warehouse string, id ident.Ident, _ string) error {
	return pl.checkPlanTable(ctx, warehouse, id)
}

func (pl *Planner) checkPlanTable(ctx context.Context, warehouse string, id ident.Ident) error {
	if err := pl.authorizeRead(ctx, warehouse, id); err != nil {
		return err
	}
	w, err := pl.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return err
	}
	_, _, err = pl.loadTable(ctx, w, id)
	return err
}
