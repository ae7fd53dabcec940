package v4convert

import (
	"testing"

	"github.com/lakehold/catalog/v4manifest"
)

// TestAssignRowIDs: rows without first_row_id get consecutive ranges from
// next in row order; rows with one keep it and take no ids.
func TestAssignRowIDs(t *testing.T) {
	row := func(count int64, first *int64) v4manifest.TrackedFile {
		return v4manifest.TrackedFile{RecordCount: count, Tracking: v4manifest.Tracking{FirstRowID: first}}
	}
	out := &Output{Data: []v4manifest.TrackedFile{row(3, nil), row(5, ptr(int64(100))), row(0, nil), row(4, nil)}}
	if got := AssignRowIDs(out, 7); got != 7 {
		t.Fatalf("assigned %d row ids, want 7", got)
	}
	want := []int64{7, 100, 10, 10}
	for i, w := range want {
		if f := out.Data[i].Tracking.FirstRowID; f == nil || *f != w {
			t.Errorf("row %d: first_row_id %v, want %d", i, f, w)
		}
	}
	if got := AssignRowIDs(out, 50); got != 0 {
		t.Errorf("second pass assigned %d, want 0", got)
	}
}
