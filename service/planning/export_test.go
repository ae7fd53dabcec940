package planning

import (
	"context"

	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// Hooks for the external tests (package planning_test), which make their
// v4 tables through package service.

// PlanLeafReads is planLeafReads.
const PlanLeafReads = planLeafReads

// V4Plan is one scan plan of a v4 table.
type V4Plan = scanPlanV4

// NewV4Plan loads table id of w and binds req to it (newV4Plan).
func (pl *Planner) NewV4Plan(ctx context.Context, w *store.Warehouse, id ident.Ident, req Request) (*V4Plan, error) {
	md, _, err := pl.loadTable(ctx, w, id)
	if err != nil {
		return nil, err
	}
	return pl.newV4Plan(w, id, md, req)
}

// Plan is plan.
func (p *scanPlanV4) Plan(ctx context.Context) (Result, error) { return p.plan(ctx) }

// LeavesRead is how many leaves the plan read.
func (p *scanPlanV4) LeavesRead() int { return p.leavesRead }

// Leaves are the leaves of the plan's units, in order.
func (p *scanPlanV4) Leaves(ctx context.Context) ([]*v4manifest.TrackedFile, error) {
	units, _, _, err := p.units(ctx)
	if err != nil {
		return nil, err
	}
	leaves := make([]*v4manifest.TrackedFile, len(units))
	for i, u := range units {
		leaves[i] = u.Leaf
	}
	return leaves, nil
}

// ReadLeaf reads a leaf of the plan's table whole.
func (p *scanPlanV4) ReadLeaf(ctx context.Context, rr *v4manifest.TrackedFile) ([]v4manifest.TrackedFile, error) {
	return p.pl.d.Readers.Leaf(ctx, p.w, p.st.location, rr, nil)
}

// ReadLeavesInOrder is readLeavesInOrder.
func (p *scanPlanV4) ReadLeavesInOrder(ctx context.Context, leaves []*v4manifest.TrackedFile,
	use func(i int, rows []v4manifest.TrackedFile) error) error {
	return p.readLeavesInOrder(ctx, leaves, use)
}

// Location is the planned table's location.
func (p *scanPlanV4) Location() string { return p.st.location }
