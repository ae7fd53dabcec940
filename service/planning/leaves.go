package planning

import (
	"context"

	"github.com/lakehold/catalog/v4manifest"
)

// planLeafReads bounds the leaf manifests one plan reads at a time.
const planLeafReads = 8

// readLeavesInOrder reads the leaves as the plan views them, up to
// planLeafReads at a time, and hands each leaf's rows to use in the order
// of leaves, as a sequential loop would: use sees leaf i only after leaf
// i-1, and the first error in that order (a read's or use's) is returned.
// At most planLeafReads leaves are read ahead of use, so the rows held at
// once stay bounded on a plan of many leaves.
func (p *scanPlanV4) readLeavesInOrder(ctx context.Context, leaves []*v4manifest.TrackedFile,
	use func(i int, rows []v4manifest.TrackedFile) error) error {
	switch len(leaves) {
	case 0:
		return nil
	case 1:
		rows, err := p.pl.d.Readers.LeafView(ctx, p.w, p.st.location, leaves[0], p.view)
		if err != nil {
			return err
		}
		return use(0, rows)
	}
	type read struct {
		rows []v4manifest.TrackedFile
		err  error
	}
	results := make([]chan read, len(leaves))
	for i := range results {
		results[i] = make(chan read, 1)
	}
	slots := make(chan struct{}, planLeafReads)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for i, leaf := range leaves {
			select {
			case slots <- struct{}{}:
			case <-done:
				return
			}
			go func() {
				rows, err := p.pl.d.Readers.LeafView(ctx, p.w, p.st.location, leaf, p.view)
				results[i] <- read{rows, err}
			}()
		}
	}()
	for i := range leaves {
		r := <-results[i]
		<-slots
		if r.err != nil {
			return r.err
		}
		if err := use(i, r.rows); err != nil {
			return err
		}
	}
	return nil
}
