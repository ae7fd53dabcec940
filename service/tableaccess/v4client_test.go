package tableaccess

import (
	"context"
	"errors"
	"testing"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/validation"
)

// TestGuardV4: only a context marked as not reading v4 is refused, and
// only for version 4; in-process callers (no mark) read v4.
func TestGuardV4(t *testing.T) {
	no := WithV4Reader(context.Background(), false)
	yes := WithV4Reader(context.Background(), true)
	for _, c := range []struct {
		ctx     context.Context
		version int
		refused bool
	}{
		{no, 4, true}, {no, 3, false}, {no, 1, false}, {yes, 4, false}, {context.Background(), 4, false},
	} {
		err := GuardV4(c.ctx, c.version, "Cannot load ns.t")
		if (err != nil) != c.refused {
			t.Fatalf("version %d: err %v, refused want %v", c.version, err, c.refused)
		}
		var e *fault.Error
		if err != nil && (!errors.As(err, &e) || e.Kind != fault.BadRequest || e.Reason != validation.ReasonV4UnsupportedByClient) {
			t.Fatalf("refusal %#v", err)
		}
	}
}
