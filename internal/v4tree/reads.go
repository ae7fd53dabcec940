package v4tree

import "golang.org/x/sync/errgroup"

// readFanOut bounds the leaves a commit reads at once. Decoding a wide
// leaf is CPU-bound and an object-store read waits on the network, so a
// few at a time keep two cores (or the network) busy; the bound keeps a
// commit that touches many leaves from holding them all in flight.
const readFanOut = 4

// readEach calls read(k) for k in [0, n), at most readFanOut at once, and
// returns the first error. read must be safe to call concurrently and
// store its result by k: the calls complete in any order.
func readEach(n int, read func(k int) error) error {
	if n == 1 {
		return read(0)
	}
	var g errgroup.Group
	g.SetLimit(readFanOut)
	for k := range n {
		g.Go(func() error { return read(k) })
	}
	return g.Wait()
}
