package upkeep

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/commitjobs"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/store"
)

func TestCheckDeletionProps(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		ok    bool
	}{
		{nil, true},
		{map[string]string{PropDeletionProfile: "soft", PropDeletionRetention: "0"}, true},
		{map[string]string{PropDeletionProfile: "hard"}, true},
		{map[string]string{PropDeletionProfile: "Soft"}, false},
		{map[string]string{PropDeletionRetention: "-1"}, false},
		{map[string]string{PropDeletionRetention: "7d"}, false},
	} {
		err := CheckDeletionProps(tc.props)
		if (err == nil) != tc.ok || (err != nil && fault.KindOf(err) != fault.BadRequest) {
			t.Errorf("CheckDeletionProps(%v) = %v, want ok=%v", tc.props, err, tc.ok)
		}
	}
}

func TestSoftDeletion(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		soft  bool
		ret   time.Duration
	}{
		{nil, false, 0},
		{map[string]string{PropDeletionProfile: "hard", PropDeletionRetention: "5"}, false, 0},
		{map[string]string{PropDeletionProfile: "soft"}, true, DefaultDeletionRetention},
		{map[string]string{PropDeletionProfile: "soft", PropDeletionRetention: "1500"}, true, 1500 * time.Millisecond},
		{map[string]string{PropDeletionProfile: "soft", PropDeletionRetention: "x"}, true, DefaultDeletionRetention},
	} {
		soft, ret := SoftDeletion(&store.Warehouse{Properties: tc.props})
		if soft != tc.soft || ret != tc.ret {
			t.Errorf("SoftDeletion(%v) = %v, %v; want %v, %v", tc.props, soft, ret, tc.soft, tc.ret)
		}
	}
}

func TestWithWarehouseDefaults(t *testing.T) {
	w := &store.Warehouse{Properties: map[string]string{"a": "w", "b": "w", "c": "w"}}
	got := tableaccess.WithWarehouseDefaults(w, map[string]string{"a": "t", "d": "t"}, "a", "b", "e")
	want := map[string]string{"a": "t", "b": "w", "d": "t"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("got[%q] = %q, want %q", k, got[k], v)
		}
	}
}

// TestEveryPolicyRuns: a policy whose jobs commits enqueue has a pass
// here, so that no job kind is enqueued without a handler.
func TestEveryPolicyRuns(t *testing.T) {
	h := (&Upkeep{}).JobHandlers()
	for _, p := range commitjobs.Policies() {
		if policyRuns[p.Kind] == nil || h[p.Kind] == nil {
			t.Errorf("policy %s has no pass or no handler", p.Kind)
		}
	}
	if len(policyRuns) != len(commitjobs.Policies()) {
		t.Errorf("%d passes for %d policies", len(policyRuns), len(commitjobs.Policies()))
	}
	if h[commitjobs.JobDeleteMetadataFiles] == nil {
		t.Errorf("no handler for %s", commitjobs.JobDeleteMetadataFiles)
	}
}

// TestDeleteMetadataFilesMalformed: arguments without a table location
// fail the attempt before anything is read or deleted.
func TestDeleteMetadataFilesMalformed(t *testing.T) {
	u := &Upkeep{}
	for _, args := range []string{`{`, `{"warehouse":"wh","files":["s3://b/t/metadata/v1.json"]}`} {
		err := u.runDeleteMetadataFiles(context.Background(), &store.JobInfo{Kind: commitjobs.JobDeleteMetadataFiles, Args: []byte(args)})
		if err == nil || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("args %s: err = %v, want malformed", args, err)
		}
	}
}

func TestSkipGone(t *testing.T) {
	for _, k := range []fault.Kind{fault.NoSuchTable, fault.NoSuchWarehouse, fault.NoSuchNamespace} {
		if err := SkipGone("k", fault.New(k, "gone")); err != nil {
			t.Errorf("SkipGone(%v) = %v, want nil", k, err)
		}
	}
	if err := SkipGone("k", fault.New(fault.BadRequest, "bad")); err == nil || err.Error() != "k: bad" {
		t.Errorf("SkipGone(bad request) = %v", err)
	}
	if err := SkipGone("k", errors.New("/secret/path")); err == nil || err.Error() != "k: internal error" {
		t.Errorf("SkipGone(internal) = %v", err)
	}
}

func TestValidJobState(t *testing.T) {
	for _, st := range JobStates {
		if !validJobState(st) {
			t.Errorf("%q is a job state", st)
		}
	}
	if validJobState("done") {
		t.Error(`"done" is not a job state`)
	}
}

func TestJobArgs(t *testing.T) {
	obj := &store.Object{Warehouse: "wh", Namespace: []string{"db"}, Name: "t", Kind: store.KindTable, Location: "s3://b/t",
		MetadataLocation: "s3://b/t/metadata/v1.json", Metadata: []byte(`{"table-uuid":"u1"}`)}
	j, err := PurgeJob(obj)
	if err != nil {
		t.Fatal(err)
	}
	var a purgeArgs
	if err := json.Unmarshal(j.Args, &a); err != nil {
		t.Fatal(err)
	}
	if j.Kind != JobPurgeTable || !j.Unique || j.TableUUID != "u1" || a.TableUUID != "u1" || a.MetadataLocation != obj.MetadataLocation {
		t.Errorf("PurgeJob = %+v, args %+v", j, a)
	}
	expires := time.UnixMilli(1_700_000_000_123)
	d := ExpireDeletedJob("wh", obj.Ref(), "id1", expires)
	var da deletedArgs
	if err := json.Unmarshal(d.Args, &da); err != nil {
		t.Fatal(err)
	}
	if d.Kind != JobExpireDeleted || !d.RunAt.Equal(expires) || da.ID != "id1" || da.ExpiresAt != expires.UnixMilli() {
		t.Errorf("ExpireDeletedJob = %+v, args %+v", d, da)
	}
}
