package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
)

// TestOrphanRemovalLosesNoCommittedFile runs orphan-file removal in a loop
// on two replicas over one Postgres while writers commit "long job" data
// files, each dated two hours back (older than the one-hour window) just
// before its commit (iceberg-go's AddFiles through a replica). A writer
// retries a 409 like a conflict, and after a refusal by the removal (its
// file held or deleted) writes its file again under a new name first. It
// prints the attempts, acknowledged commits, refusals and acknowledged
// files lost, which must be 0: every file an acknowledged commit added is
// still on disk and referenced by the table (issue 46).
func TestOrphanRemovalLosesNoCommittedFile(t *testing.T) {
	requireFault(t)
	work := t.TempDir()
	bin := buildCatalog(t, work)
	pg := startPostgres(t)
	warehouse := filepath.Join(work, "warehouse")
	reps := []*replica{startReplica(t, 0, bin, pg.url(), warehouse, work, true), startReplica(t, 1, bin, pg.url(), warehouse, work, false)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cats := make([]*rest.Catalog, len(reps))
	for i, r := range reps {
		c, err := rest.NewCatalog(ctx, "fault", "http://"+r.addr, rest.WithWarehouseLocation("lake"))
		if err != nil {
			t.Fatal(err)
		}
		cats[i] = c
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	if err := cats[0].CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	v2 := catalog.WithProperties(iceberg.Properties{"format-version": "2"})
	tmpl, err := cats[0].CreateTable(ctx, table.Identifier{"ns", "template"}, sc, v2)
	if err != nil {
		t.Fatal(err)
	}
	if tmpl, err = tmpl.AppendTable(ctx, idRows(t, sc, 1, 2, 3), 10, nil); err != nil {
		t.Fatal(err)
	}
	tpl := firstParquet(t, strings.TrimPrefix(tmpl.Location(), "file://"))
	tbl, err := cats[0].CreateTable(ctx, table.Identifier{"ns", "t"}, sc, v2)
	if err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimPrefix(tbl.Location(), "file://")

	var attempts, acked, refused, conflicts, rewritten, otherErr, runs, runErr, deleted atomic.Int64
	var mu sync.Mutex
	var ackedFiles []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// write puts a "long job" file, dated two hours back, at a new name.
	write := func(w int, n, v *int) (string, bool) {
		f := filepath.Join(dir, "data", fmt.Sprintf("job-%d-%04d-%d.parquet", w, *n, *v))
		*v++
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil || os.WriteFile(f, tpl, 0o644) != nil {
			t.Errorf("write %s: %v", f, err)
			return "", false
		}
		old := time.Now().Add(-2 * time.Hour)
		_ = os.Chtimes(f, old, old)
		return f, true
	}
	for w := range 4 {
		wg.Go(func() {
			for n := 0; ; n++ {
				v := 0
				f, ok := write(w, &n, &v)
				if !ok {
					return
				}
				// One job: retried like a conflict until acknowledged; a
				// refusal (its file held or deleted by a removal) or a
				// file gone before the commit is sent is written again
				// under a new name first.
				for try := 0; try < 50; try++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := os.Stat(f); err != nil {
						rewritten.Add(1)
						if f, ok = write(w, &n, &v); !ok {
							return
						}
					}
					attempts.Add(1)
					cur, err := cats[(n+try)%2].LoadTable(ctx, table.Identifier{"ns", "t"})
					if err == nil {
						tx := cur.NewTransaction()
						if err = tx.AddFiles(ctx, []string{"file://" + f}, nil, false); err == nil {
							_, err = tx.Commit(ctx)
						}
					}
					if err == nil {
						acked.Add(1)
						mu.Lock()
						ackedFiles = append(ackedFiles, f)
						mu.Unlock()
						break
					}
					switch {
					case strings.Contains(err.Error(), "orphan-file removal"):
						refused.Add(1)
						rewritten.Add(1)
						if f, ok = write(w, &n, &v); !ok {
							return
						}
					case errors.Is(err, table.ErrCommitFailed):
						conflicts.Add(1)
					case errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no such file"):
						// Deleted between the stat and AddFiles's read:
						// the stat above rewrites it.
					default:
						if otherErr.Add(1) <= 3 {
							t.Logf("commit error: %v", err)
						}
					}
				}
			}
		})
	}
	for r := range 2 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				body := map[string]any{"dry-run": false, "older-than": time.Now().Add(-time.Hour - time.Minute).UTC().Format(time.RFC3339)}
				status, out := manage(ctx, reps[(r+n)%2].addr, "/management/v1/warehouses/lake/namespaces/ns/tables/t/remove-orphan-files", body)
				runs.Add(1)
				if status != 200 {
					if runErr.Add(1) <= 3 {
						t.Logf("removal answered %d: %s", status, out)
					}
					continue
				}
				deleted.Add(int64(strings.Count(out, ".parquet")))
			}
		})
	}
	time.Sleep(20 * time.Second)
	close(stop)
	wg.Wait()

	final, err := cats[0].LoadTable(ctx, table.Identifier{"ns", "t"})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := final.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	referenced := map[string]bool{}
	for _, task := range tasks {
		referenced[strings.TrimPrefix(task.File.FilePath(), "file://")] = true
	}
	lost := 0
	for _, f := range ackedFiles {
		if _, err := os.Stat(f); err != nil || !referenced[f] {
			lost++
			t.Errorf("acknowledged file lost: %s (referenced %v, stat %v)", filepath.Base(f), referenced[f], err)
		}
	}
	t.Logf("orphan removal under commits (2 replicas, Postgres): %d commit attempts, %d acknowledged, %d refused (409 orphan removal), %d other 409s (retried), %d files rewritten, %d other errors",
		attempts.Load(), acked.Load(), refused.Load(), conflicts.Load(), rewritten.Load(), otherErr.Load())
	t.Logf("orphan removal under commits: %d removal runs (%d not 200), %d orphan-file names reported, %d acknowledged files lost",
		runs.Load(), runErr.Load(), deleted.Load(), lost)
	if acked.Load() == 0 || runs.Load()-runErr.Load() == 0 {
		t.Fatalf("the workload did not exercise both sides")
	}
}

// manage posts body to a management route of the replica at addr.
func manage(ctx context.Context, addr, path string, body any) (int, string) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", "http://"+addr+path, bytes.NewReader(b))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := setupClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func idRows(t *testing.T, sc *iceberg.Schema, ids ...int64) arrow.Table {
	t.Helper()
	asc, err := table.SchemaToArrowSchema(sc, nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(asc, []arrow.RecordBatch{rec})
}

func firstParquet(t *testing.T, dir string) []byte {
	t.Helper()
	var found string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && found == "" && strings.HasSuffix(p, ".parquet") {
			found = p
		}
		return nil
	})
	data, err := os.ReadFile(found)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
