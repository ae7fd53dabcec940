package restread

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/lakehold/catalog/internal/stitch"
	"github.com/lakehold/catalog/openapi/scantasks"
)

// restClient is the part of the Iceberg REST protocol `catalog read`
// speaks, as a remote client would: config, sign-in, load and plan.
type restClient struct {
	uri    string // base, without a trailing slash
	prefix string // from /v1/config overrides; "" when none
	token  string
	hc     *http.Client
}

// restError is an ErrorModel answer, kept for the message a user sees.
type restError struct {
	Status  int
	Type    string
	Message string
	Reason  string
}

func (e *restError) Error() string {
	msg := fmt.Sprintf("catalog answered %d %s: %s", e.Status, e.Type, e.Message)
	if e.Reason != "" {
		msg += " (reason " + e.Reason + ")"
	}
	return msg
}

// do sends one request with the headers every `catalog read` request
// carries: the client reads v4 column files and wants vended credentials.
// A non-2xx answer becomes a *restError (or a plain error when the body is
// not an ErrorModel); out, when not nil, receives the decoded body.
func (c *restClient) do(ctx context.Context, method, path string, query url.Values, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := c.uri + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.headers(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return answerError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the expected JSON: %w", method, path, err)
	}
	return nil
}

func (c *restClient) headers(req *http.Request) {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Iceberg-Column-Files", "true")
	req.Header.Set("X-Iceberg-Access-Delegation", "vended-credentials")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

// answerError turns a non-2xx body into an error: an ErrorModel's type,
// message and reason, an OAuth error, or just the status.
func answerError(status int, data []byte) error {
	var em struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Reason  string `json:"reason"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &em) == nil && em.Error != nil {
		return &restError{Status: status, Type: em.Error.Type, Message: em.Error.Message, Reason: em.Error.Reason}
	}
	var oe struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(data, &oe) == nil && oe.Error != "" {
		return &restError{Status: status, Type: oe.Error, Message: oe.Description}
	}
	return &restError{Status: status, Type: http.StatusText(status), Message: "the answer is not an Iceberg error"}
}

// signIn trades client credentials for a token (client credentials
// grant at /v1/oauth/tokens). It fails when the catalog refuses them.
func (c *restClient) signIn(ctx context.Context, credential string) error {
	id, secret, ok := strings.Cut(credential, ":")
	if !ok || id == "" {
		return errors.New("--credential must be CLIENT_ID:SECRET")
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {"catalog"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.uri+"/v1/oauth/tokens", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c.headers(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sign-in: %w", answerError(resp.StatusCode, data))
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(data, &tok); err != nil || tok.AccessToken == "" {
		return errors.New("sign-in: the answer carries no access_token")
	}
	c.token = tok.AccessToken
	return nil
}

// configure reads /v1/config for the warehouse and takes its prefix.
func (c *restClient) configure(ctx context.Context, warehouse string) error {
	q := url.Values{}
	if warehouse != "" {
		q.Set("warehouse", warehouse)
	}
	var cfg struct {
		Defaults  map[string]string `json:"defaults"`
		Overrides map[string]string `json:"overrides"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/config", q, nil, &cfg); err != nil {
		return err
	}
	c.prefix = cfg.Overrides["prefix"]
	if c.prefix == "" {
		c.prefix = cfg.Defaults["prefix"]
	}
	return nil
}

// tablePath is /v1/{prefix}/namespaces/{ns}/tables/{table}, the namespace
// levels joined by the unit separator as the REST spec says.
func (c *restClient) tablePath(ns []string, table string) string {
	p := "/v1/"
	if c.prefix != "" {
		p += url.PathEscape(c.prefix) + "/"
	}
	return p + "namespaces/" + url.PathEscape(strings.Join(ns, "\x1f")) + "/tables/" + url.PathEscape(table)
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
	if err := c.do(ctx, http.MethodPost, base+"/plan", nil, req, &first); err != nil {
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
		if err := c.do(ctx, http.MethodPost, base+"/tasks", nil, map[string]string{"plan-task": pt}, &ans); err != nil {
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
