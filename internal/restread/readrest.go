package restread

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/lakehold/catalog/internal/restclient"

	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/openapi/scantasks"
)

// restClient is the part of the Iceberg REST protocol `catalog read`
// speaks, as a remote client would: config, sign-in, load and plan, over
// the shared client (internal/restclient).
type restClient struct{ *restclient.Client }

// newRESTClient is a client for uri whose every request says the reader
// takes v4 column files and wants vended credentials.
func newRESTClient(uri, token string) *restClient {
	c := restclient.New(uri, nil)
	c.Token = token
	c.MaxBody = 1 << 30
	c.Header = http.Header{"X-Iceberg-Column-Files": {"true"}, "X-Iceberg-Access-Delegation": {"vended-credentials"}}
	return &restClient{c}
}

// tablePath is /v1/{prefix}/namespaces/{ns}/tables/{table}.
func (c *restClient) tablePath(ns []string, table string) string {
	return c.NamespaceURL(ns) + "/tables/" + url.PathEscape(table)
}

// storageCredential is one entry of a LoadTableResult's
// storage-credentials.
type storageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// loadedTable is what the reader needs of a LoadTableResult.
type loadedTable struct {
	Metadata           json.RawMessage     `json:"metadata"`
	Config             map[string]string   `json:"config"`
	StorageCredentials []storageCredential `json:"storage-credentials"`
}

// fileProps are the FileIO properties for one location: the table's
// config with the longest matching storage credential over it.
func (t *loadedTable) fileProps(location string) map[string]string {
	props := map[string]string{}
	for k, v := range t.Config {
		props[k] = v
	}
	best := -1
	for i, sc := range t.StorageCredentials {
		if strings.HasPrefix(location, sc.Prefix) && (best < 0 || len(sc.Prefix) > len(t.StorageCredentials[best].Prefix)) {
			best = i
		}
	}
	if best >= 0 {
		for k, v := range t.StorageCredentials[best].Config {
			props[k] = v
		}
	}
	return props
}

// planAnswer is a PlanTableScanResult or FetchScanTasksResult.
// Its tasks and delete files are the generated types the server encodes
// (openapi/scantasks); unknown keys are ignored, as from any server.
type planAnswer struct {
	Status        string                     `json:"status"`
	PlanTasks     []string                   `json:"plan-tasks"`
	FileScanTasks []scantasks.FileScanTask   `json:"file-scan-tasks"`
	DeleteFiles   []scantasks.PlanDeleteFile `json:"delete-files"`
}

// planRequest is the body of POST .../plan.
type planRequest struct {
	SnapshotID        *int64          `json:"snapshot-id,omitempty"`
	Select            []string        `json:"select,omitempty"`
	Filter            json.RawMessage `json:"filter,omitempty"`
	CaseSensitive     bool            `json:"case-sensitive"`
	UseSnapshotSchema bool            `json:"use-snapshot-schema,omitempty"`
}

// plan plans the scan and fetches every plan task (and any plan task a
// fetch answers with), returning the file scan tasks with their delete
// files resolved. A plan the catalog answers other than completed is an
// error: this server never leaves one pending.
func (c *restClient) plan(ctx context.Context, base string, req planRequest) ([]stitch.Task, error) {
	var first planAnswer
	if err := c.Do(ctx, http.MethodPost, base+"/plan", nil, req, &first); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if first.Status != "completed" {
		return nil, fmt.Errorf("plan: status %q; catalog read takes only completed plans", first.Status)
	}
	tasks, err := decodeTasks(first)
	if err != nil {
		return nil, err
	}
	pending := first.PlanTasks
	for len(pending) > 0 {
		pt := pending[0]
		pending = pending[1:]
		var ans planAnswer
		if err := c.Do(ctx, http.MethodPost, base+"/tasks", nil, map[string]string{"plan-task": pt}, &ans); err != nil {
			return nil, fmt.Errorf("fetch plan task: %w", err)
		}
		more, err := decodeTasks(ans)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, more...)
		pending = append(pending, ans.PlanTasks...)
	}
	return tasks, nil
}
