package catalogimport

import "fmt"

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

// check fails with a *LimitError when the namespaces plus objects (tables and views)
// exceed the limit.
func (l limit) check(objects int) error {
	if l.max > 0 && l.namespaces+objects > l.max {
		return &LimitError{Max: l.max}
	}
	return nil
}
