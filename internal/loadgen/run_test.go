package loadgen

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunLoopClosedLoop(t *testing.T) {
	var inFlight, peak, calls atomic.Int64
	op := func(_ context.Context, w, seq int) (int, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		calls.Add(1)
		time.Sleep(time.Millisecond)
		if w == 0 && seq%2 == 1 {
			return 0, errors.New("odd")
		}
		return 1, nil
	}
	s := RunLoop(context.Background(), 3, 60*time.Millisecond, op)
	if peak.Load() > 3 {
		t.Errorf("%d requests in flight at once, want at most 3 (closed loop)", peak.Load())
	}
	if int64(s.Ops+s.Errors) != calls.Load() || s.Errors == 0 || s.First != "odd" {
		t.Errorf("sample %d ops + %d errors (%q), %d calls", s.Ops, s.Errors, s.First, calls.Load())
	}
	if s.Retries != s.Ops {
		t.Errorf("%d resends for %d ops, each reporting one", s.Retries, s.Ops)
	}
	if len(s.Lat) != s.Ops {
		t.Errorf("%d latencies for %d ops: failed requests must not count", len(s.Lat), s.Ops)
	}
	if s.Elapsed < 60*time.Millisecond {
		t.Errorf("elapsed %v, shorter than the run", s.Elapsed)
	}
}

func TestSnapshotBatch(t *testing.T) {
	b := snapshotBatch("u", "file:///w/t", 501, 3, 1000)
	ups := b["updates"].([]map[string]any)
	if len(ups) != 4 {
		t.Fatalf("%d updates, want 3 add-snapshot + 1 set-snapshot-ref", len(ups))
	}
	first := ups[0]["snapshot"].(map[string]any)
	if first["snapshot-id"] != 501 || first["parent-snapshot-id"] != 500 || first["sequence-number"] != 501 ||
		first["timestamp-ms"] != int64(1501) || first["manifest-list"] != "file:///w/t/metadata/snap-501-1-lg.avro" {
		t.Errorf("first snapshot %v", first)
	}
	if ref := ups[3]; ref["action"] != "set-snapshot-ref" || ref["snapshot-id"] != 503 {
		t.Errorf("last update %v, want main at 503", ref)
	}
	root := snapshotBatch("u", "l", 1, 1, 0)["updates"].([]map[string]any)[0]["snapshot"].(map[string]any)
	if _, ok := root["parent-snapshot-id"]; ok {
		t.Errorf("snapshot 1 has a parent: %v", root)
	}
}

func TestSelectScenarios(t *testing.T) {
	got, err := SelectScenarios([]string{ScenarioList, ScenarioLoadSmall})
	if err != nil || len(got) != 2 || got[0].Name != ScenarioLoadSmall || got[1].Name != ScenarioList {
		t.Errorf("SelectScenarios = %v, %v; want report order", got, err)
	}
	if _, err := SelectScenarios([]string{"load-everything"}); err == nil {
		t.Error("unknown scenario accepted")
	}
}

// TestRetriedResendsOnlyConflicts: a commit answered 409 is resent (up to
// the bound); any other failure ends the operation at once.
func TestRetriedResendsOnlyConflicts(t *testing.T) {
	conflict := &StatusError{Got: 409, text: "409"}
	cases := []struct {
		name        string
		fails       []error // answers before success; nil entries never happen
		wantRetries int
		wantErr     bool
	}{
		{"ok at once", nil, 0, false},
		{"two conflicts then ok", []error{conflict, conflict}, 2, false},
		{"500 is not resent", []error{&StatusError{Got: 500, text: "500"}}, 0, true},
		{"transport error is not resent", []error{errors.New("reset")}, 0, true},
		{"conflicts past the bound", make([]error, maxCommitRetries+5), maxCommitRetries, true},
	}
	for _, c := range cases {
		for i := range c.fails {
			if c.fails[i] == nil {
				c.fails[i] = conflict
			}
		}
		calls := 0
		op := retried(func(context.Context, *Target, int, int) error {
			calls++
			if calls <= len(c.fails) {
				return c.fails[calls-1]
			}
			return nil
		})
		n, err := op(context.Background(), nil, 0, 0)
		if n != c.wantRetries || (err != nil) != c.wantErr {
			t.Errorf("%s: retries %d, err %v; want %d, error %v", c.name, n, err, c.wantRetries, c.wantErr)
		}
	}
}
