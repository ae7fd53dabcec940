package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Target is one catalog under load: a name for the report, its REST URI,
// the warehouse sent to /v1/config (which may answer with a prefix), and
// the processes whose CPU time is the catalog's (roots of process trees,
// for the CPU-per-operation phase; none: that phase skips the target).
type Target struct {
	Name      string
	URI       string
	Warehouse string
	CPUPids   []int

	http    *http.Client
	base    string // ".../v1/" or ".../v1/{prefix}/"
	fx      fixtures
	created atomic.Int64 // names for the create scenario
}

// ParseTarget reads NAME=URI[,warehouse=W][,cpu=PID[+PID...]]; it returns
// an error when the name or URI is missing, an option is unknown or a pid
// is not a number.
func ParseTarget(s string) (*Target, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return nil, fmt.Errorf("target %q: want NAME=URI[,warehouse=W][,cpu=PID[+PID...]]", s)
	}
	parts := strings.Split(rest, ",")
	t := &Target{Name: name, URI: strings.TrimRight(parts[0], "/")}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "warehouse":
			t.Warehouse = v
		case "cpu":
			pids, err := ParsePIDs(v)
			if err != nil {
				return nil, fmt.Errorf("target %q: %w", s, err)
			}
			t.CPUPids = pids
		default:
			return nil, fmt.Errorf("target %q: unknown option %q", s, k)
		}
	}
	return t, nil
}

// Connect prepares the HTTP client (keep-alive pool sized for clients
// connections; gzip asked for only when gzip is true) and resolves the
// REST prefix from /v1/config. It returns an error when the config call
// fails.
func (t *Target) Connect(ctx context.Context, clients int, gzip bool) error {
	t.http = &http.Client{
		Timeout: 2 * time.Minute,
		Transport: &http.Transport{
			MaxIdleConns:        0,
			MaxIdleConnsPerHost: clients * 2,
			DisableCompression:  !gzip,
		},
	}
	cfgURL := t.URI + "/v1/config"
	if t.Warehouse != "" {
		cfgURL += "?warehouse=" + url.QueryEscape(t.Warehouse)
	}
	var cfg struct {
		Defaults  map[string]string `json:"defaults"`
		Overrides map[string]string `json:"overrides"`
	}
	if _, err := t.call(ctx, http.MethodGet, cfgURL, nil, nil, &cfg, http.StatusOK); err != nil {
		return fmt.Errorf("%s: config: %w", t.Name, err)
	}
	prefix := cfg.Defaults["prefix"]
	if p, ok := cfg.Overrides["prefix"]; ok {
		prefix = p
	}
	t.base = t.URI + "/v1/"
	if prefix != "" {
		t.base += prefix + "/"
	}
	return nil
}

// call sends one request to an absolute or base-relative path and checks
// the status; with out non-nil it decodes the JSON body into it, otherwise
// it reads the body to the end (so the connection is reused and the server
// has done all its work). It returns the response headers, and an error
// for a transport failure or an unexpected status.
func (t *Target) call(ctx context.Context, method, path string, hdr http.Header, body, out any, want int) (http.Header, error) {
	u := path
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		u = t.base + path
	}
	var rd io.Reader
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(body); err != nil {
				return nil, err
			}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return resp.Header, &StatusError{Got: resp.StatusCode,
			text: fmt.Sprintf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, bytes.TrimSpace(msg))}
	}
	if out != nil {
		return resp.Header, json.NewDecoder(resp.Body).Decode(out)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.Header, err
}

// StatusError is an answer with another status than the one expected.
type StatusError struct {
	Got  int
	text string
}

func (e *StatusError) Error() string { return e.text }
