package catalogimport

import (
	"errors"
	"fmt"
)

// LimitError says a run would handle more objects than Options.MaxObjects
// allows; nothing was written.
type LimitError struct{ Max int }

// Error says the limit and that nothing was written.
func (e *LimitError) Error() string {
	return fmt.Sprintf("the import would handle more than %d namespaces, tables and views; nothing was written (import fewer namespaces at a time)", e.Max)
}

// limit counts what a run has listed against Options.MaxObjects.
type limit struct {
	max        int // 0: none
	namespaces int
}

// left is how many more objects a listing may return once objects are
// listed (-1: no bound), so that it stops as soon as the run is over the
// limit rather than after reading the whole source.
func (l limit) left(objects int) int {
	if l.max <= 0 {
		return -1
	}
	return max(l.max-l.namespaces-objects, 0)
}

// over is err, or a *LimitError when a listing stopped at the limit.
func (l limit) over(err error) error {
	if errors.Is(err, errTooMany) {
		return &LimitError{Max: l.max}
	}
	return err
}
