package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// SetupOptions says what Setup builds on every target. The same names and
// sizes go to every target, so each server answers for identical tables.
type SetupOptions struct {
	Namespace  string // base namespace name; two more get suffixes _list and _create
	Snapshots  int    // snapshots in table "big"
	Batch      int    // add-snapshot updates per commit while building "big"
	ListTables int    // tables in the _list namespace
	Writers    int    // tables c0..c{Writers-1}, one per client, for distinct commits
}

// fixtures is what Setup left on a target for the scenarios to use.
type fixtures struct {
	ns, listNS, createNS string
	smallETag            string
	uuids                map[string]string // table in ns → table-uuid, for commit requirements
	na                   map[string]string // scenario → why it does not apply here
}

type tableMeta struct {
	Metadata struct {
		Location  string `json:"location"`
		TableUUID string `json:"table-uuid"`
	} `json:"metadata"`
}

// Setup creates the namespaces and tables the scenarios need, through the
// REST API only. It returns an error on the first request that fails.
func (t *Target) Setup(ctx context.Context, o SetupOptions) error {
	t.fx = fixtures{ns: o.Namespace, listNS: o.Namespace + "_list", createNS: o.Namespace + "_create",
		uuids: map[string]string{}, na: map[string]string{}}
	for _, ns := range []string{t.fx.ns, t.fx.listNS, t.fx.createNS} {
		body := map[string]any{"namespace": []string{ns}}
		if _, err := t.call(ctx, http.MethodPost, "namespaces", nil, body, nil, http.StatusOK); err != nil {
			return err
		}
	}
	names := []string{"small", "hot"}
	for i := range o.Writers {
		names = append(names, fmt.Sprintf("c%d", i))
	}
	for _, n := range names {
		m, err := t.createTable(ctx, t.fx.ns, n)
		if err != nil {
			return err
		}
		t.fx.uuids[n] = m.Metadata.TableUUID
	}
	for i := range o.ListTables {
		if _, err := t.createTable(ctx, t.fx.listNS, fmt.Sprintf("l%04d", i)); err != nil {
			return err
		}
	}
	if err := t.buildBig(ctx, o); err != nil {
		return err
	}
	return t.probeRevalidation(ctx)
}

func (t *Target) createTable(ctx context.Context, ns, name string) (tableMeta, error) {
	var m tableMeta
	_, err := t.call(ctx, http.MethodPost, "namespaces/"+ns+"/tables", nil, createBody(name), &m, http.StatusOK)
	return m, err
}

// createBody is a small unpartitioned v2 table: the same request for every
// server and every create.
func createBody(name string) map[string]any {
	return map[string]any{
		"name": name,
		"schema": map[string]any{
			"type": "struct", "schema-id": 0,
			"fields": []map[string]any{
				{"id": 1, "name": "id", "required": true, "type": "long"},
				{"id": 2, "name": "data", "required": false, "type": "string"},
			},
		},
		"properties": map[string]string{"format-version": "2"},
	}
}

// buildBig creates table "big" and gives it o.Snapshots snapshots with
// batched add-snapshot commits, each moving main to its last snapshot.
func (t *Target) buildBig(ctx context.Context, o SetupOptions) error {
	m, err := t.createTable(ctx, t.fx.ns, "big")
	if err != nil {
		return err
	}
	t.fx.uuids["big"] = m.Metadata.TableUUID
	// Timestamps in the past, one millisecond apart, so no server sees a
	// snapshot from the future.
	base := time.Now().Add(-time.Duration(o.Snapshots+1000) * time.Millisecond).UnixMilli()
	for first := 1; first <= o.Snapshots; first += o.Batch {
		n := min(o.Batch, o.Snapshots-first+1)
		body := snapshotBatch(m.Metadata.TableUUID, m.Metadata.Location, first, n, base)
		if _, err := t.call(ctx, http.MethodPost, "namespaces/"+t.fx.ns+"/tables/big", nil, body, nil, http.StatusOK); err != nil {
			return fmt.Errorf("building big (snapshot %d): %w", first, err)
		}
	}
	return nil
}

// snapshotBatch is a commit adding snapshots first..first+n-1 (ids equal
// sequence numbers, each the child of the one before) and pointing main at
// the last. The manifest lists are never read by a load, so they need not
// exist.
func snapshotBatch(uuid, location string, first, n int, baseMS int64) map[string]any {
	updates := make([]map[string]any, 0, n+1)
	for id := first; id < first+n; id++ {
		s := map[string]any{
			"snapshot-id":     id,
			"sequence-number": id,
			"timestamp-ms":    baseMS + int64(id),
			"manifest-list":   fmt.Sprintf("%s/metadata/snap-%d-1-lg.avro", location, id),
			"summary":         map[string]string{"operation": "append", "added-data-files": "1", "added-records": "10"},
			"schema-id":       0,
		}
		if id > 1 {
			s["parent-snapshot-id"] = id - 1
		}
		updates = append(updates, map[string]any{"action": "add-snapshot", "snapshot": s})
	}
	updates = append(updates, map[string]any{
		"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": first + n - 1,
	})
	return map[string]any{
		"requirements": []map[string]any{{"type": "assert-table-uuid", "uuid": uuid}},
		"updates":      updates,
	}
}

// probeRevalidation records the small table's ETag and whether the server
// answers If-None-Match with 304; when it does not, the 304 scenario is
// marked not applicable rather than measured as something else.
func (t *Target) probeRevalidation(ctx context.Context) error {
	path := "namespaces/" + t.fx.ns + "/tables/small"
	h, err := t.call(ctx, http.MethodGet, path, nil, nil, nil, http.StatusOK)
	if err != nil {
		return err
	}
	t.fx.smallETag = h.Get("ETag")
	if t.fx.smallETag == "" {
		t.fx.na[ScenarioLoad304] = "no ETag"
		return nil
	}
	hdr := http.Header{"If-None-Match": {t.fx.smallETag}}
	if _, err := t.call(ctx, http.MethodGet, path, hdr, nil, nil, http.StatusNotModified); err != nil {
		t.fx.na[ScenarioLoad304] = "If-None-Match not honoured"
	}
	return nil
}
