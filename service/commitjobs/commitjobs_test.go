package commitjobs

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
)

const uuid = "9c12d441-03fe-4693-9a96-a0705ddf69c1"

// metadata is a v2 table at file:///wh/t with properties props and the
// metadata files log in its metadata log.
func metadata(t *testing.T, props map[string]string, log ...string) table.Metadata {
	t.Helper()
	entries := make([]string, len(log))
	for i, f := range log {
		entries[i] = fmt.Sprintf(`{"metadata-file":"file:///wh/t/metadata/%s","timestamp-ms":%d}`, f, 1690000000000+i)
	}
	rawProps, _ := json.Marshal(props)
	doc := `{"format-version":2,"table-uuid":"` + uuid + `","location":"file:///wh/t",` +
		`"last-sequence-number":0,"last-updated-ms":1700000000000,"last-column-id":1,"current-schema-id":0,` +
		`"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}],` +
		`"default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,` +
		`"default-sort-order-id":0,"sort-orders":[{"order-id":0,"fields":[]}],` +
		`"properties":` + string(rawProps) + `,"metadata-log":[` + strings.Join(entries, ",") + `]}`
	meta, err := table.ParseMetadataBytes([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return meta
}

var (
	id  = ident.Ident{Namespace: []string{"db"}, Name: "t"}
	now = time.UnixMilli(1_700_000_000_000)
)

func kinds(jobs []store.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Kind)
	}
	return out
}

func TestPolicyProps(t *testing.T) {
	w := &store.Warehouse{Properties: map[string]string{PropExpireEnabled: "true", PropExpireDelay: "2000"}}
	expire := Policies()[0]
	if !expire.On(w, nil) || expire.On(w, map[string]string{PropExpireEnabled: "false"}) {
		t.Error("On: the table's value wins over the warehouse's")
	}
	if got := expire.DelayOf(w, nil); got != 2*time.Second {
		t.Errorf("DelayOf = %v, want 2s", got)
	}
	if got := expire.DelayOf(w, map[string]string{PropExpireDelay: "-3"}); got != time.Hour {
		t.Errorf("DelayOf a negative delay = %v, want the default", got)
	}
	if got := Millis(w, map[string]string{PropOrphanAge: "x"}, PropOrphanAge, time.Minute); got != time.Minute {
		t.Errorf("Millis of a non-number = %v, want the default", got)
	}
}

// TestPolicyJobs: one Unique job per policy that is on, for the table by
// name and UUID, at the policy's delay.
func TestPolicyJobs(t *testing.T) {
	w := &store.Warehouse{Name: "wh", Properties: map[string]string{PropCompactEnabled: "true", PropOrphanEnabled: "true"}}
	meta := metadata(t, map[string]string{PropExpireEnabled: "true", PropExpireDelay: "5000", PropOrphanEnabled: "false"})
	jobs := For(now, w, id, meta, meta, "file:///wh/t/metadata/v1.json")
	if got, want := kinds(jobs), []string{JobExpireSnapshots, JobCompactColumnFiles}; !slices.Equal(got, want) {
		t.Fatalf("kinds = %v, want %v", got, want)
	}
	for i, delay := range []time.Duration{5 * time.Second, 10 * time.Minute} {
		j := jobs[i]
		if !j.Unique || j.Warehouse != "wh" || j.Table != id.String() || j.TableUUID != uuid || !j.RunAt.Equal(now.Add(delay)) {
			t.Errorf("job %s = %+v, want unique, for wh.%s (%s), at now+%v", j.Kind, j, id, uuid, delay)
		}
		var a PolicyArgs
		if err := json.Unmarshal(j.Args, &a); err != nil {
			t.Fatal(err)
		}
		if a.Warehouse != "wh" || !slices.Equal(a.Namespace, id.Namespace) || a.Name != id.Name || a.TableUUID != uuid {
			t.Errorf("args of %s = %+v", j.Kind, a)
		}
	}
	if jobs := For(now, &store.Warehouse{Name: "wh"}, id, meta, metadata(t, nil), "v"); len(jobs) != 0 {
		t.Errorf("no policy on: jobs %v", kinds(jobs))
	}
}

// TestMetadataCleanupJob: a table that deletes its metadata after commit
// gets a job for the files the commit drops from the log (in the old log,
// in neither the new log nor the new current file), and none when nothing
// is dropped or it does not ask.
func TestMetadataCleanupJob(t *testing.T) {
	w := &store.Warehouse{Name: "wh"}
	on := map[string]string{"write.metadata.delete-after-commit.enabled": "true"}
	base := metadata(t, on, "v1.json", "v2.json", "v3.json")
	meta := metadata(t, on, "v3.json", "v4.json")
	jobs := For(now, w, id, base, meta, "file:///wh/t/metadata/v5.json")
	if len(jobs) != 1 || jobs[0].Kind != JobDeleteMetadataFiles || jobs[0].Unique || jobs[0].TableUUID != uuid {
		t.Fatalf("jobs = %+v, want one %s", jobs, JobDeleteMetadataFiles)
	}
	var a MetadataFilesArgs
	if err := json.Unmarshal(jobs[0].Args, &a); err != nil {
		t.Fatal(err)
	}
	want := []string{"file:///wh/t/metadata/v1.json", "file:///wh/t/metadata/v2.json"}
	if a.Warehouse != "wh" || a.TableLocation != "file:///wh/t" || !slices.Equal(a.Files, want) {
		t.Errorf("args = %+v, want files %v", a, want)
	}
	// The new current file is kept even when the log no longer names it.
	if jobs := For(now, w, id, metadata(t, on, "v1.json"), metadata(t, on), "file:///wh/t/metadata/v1.json"); len(jobs) != 0 {
		t.Errorf("nothing dropped: jobs %v", kinds(jobs))
	}
	if jobs := For(now, w, id, base, metadata(t, nil, "v4.json"), "file:///wh/t/metadata/v5.json"); len(jobs) != 0 {
		t.Errorf("not asked for: jobs %v", kinds(jobs))
	}
}
