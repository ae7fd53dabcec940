package fault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	nsName    = "fault"
	tableName = "t"
	keyPrefix = "fault.key."
)

func keyName(k int) string { return fmt.Sprintf("%s%04d", keyPrefix, k) }

// writerKeys is the set of writer keys among a table's properties.
func writerKeys(props map[string]string) keySet {
	var s keySet
	for name := range props {
		if rest, ok := strings.CutPrefix(name, keyPrefix); ok {
			if k, err := strconv.Atoi(rest); err == nil {
				s = s.with(k)
			}
		}
	}
	return s
}

// response is one HTTP exchange: status 0 means a transport error.
type response struct {
	status  int
	body    []byte
	errType string // Iceberg error type, or the transport error
	message string // the Iceberg error message
	refused bool   // the connection was refused: the request never arrived
}

var httpClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second},
}

// setupClient makes the set-up requests (the namespace and table a run
// needs): a replica's first create on a loaded machine may take longer
// than the workload's 5 s budget, and set-up is not what is measured.
var setupClient = &http.Client{Timeout: 60 * time.Second}

// setupAttempts bounds the retries of a set-up request answered 503.
const setupAttempts = 5

// call sends one request to a replica and reads the whole answer.
func call(ctx context.Context, method, addr, path string, body any) response {
	return callWith(ctx, httpClient, method, addr, path, body)
}

// callWith is call through the given client.
func callWith(ctx context.Context, client *http.Client, method, addr, path string, body any) response {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			panic(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+"/v1/lake"+path, rd)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return response{errType: err.Error(), refused: errors.Is(err, syscall.ECONNREFUSED)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{errType: err.Error()}
	}
	r := response{status: resp.StatusCode, body: data}
	if r.status != http.StatusOK {
		var e struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		r.errType, r.message = e.Error.Type, e.Error.Message
	}
	return r
}

// commitOutcome is what a client may conclude from a commit's response.
// The project's contract: 500 CommitStateUnknown is the only answer after
// which a commit may have landed; every other error status (409, 503 and
// other 500s) means nothing was committed. A transport error other than a
// refused connection leaves the outcome unknown.
func commitOutcome(r response) outcome {
	switch {
	case r.status == http.StatusOK:
		return applied
	case r.status == 0 && !r.refused:
		return unknown
	case r.status == http.StatusInternalServerError && r.errType == "CommitStateUnknownException":
		return unknown
	}
	return notApplied
}

// commitBody sets one writer key, guarded only by the table's uuid, so
// that concurrent writers never conflict for the client: the server
// re-bases lost races itself.
func commitBody(uuid string, k int) any {
	return map[string]any{
		"requirements": []any{map[string]any{"type": "assert-table-uuid", "uuid": uuid}},
		"updates": []any{map[string]any{
			"action": "set-properties", "updates": map[string]string{keyName(k): strconv.Itoa(k)},
		}},
	}
}

// loaded is the part of a loadTable answer the checks use.
type loaded struct {
	MetadataLocation string `json:"metadata-location"`
	Metadata         struct {
		TableUUID   string            `json:"table-uuid"`
		Properties  map[string]string `json:"properties"`
		MetadataLog []struct {
			File string `json:"metadata-file"`
		} `json:"metadata-log"`
	} `json:"metadata"`
}

func tablePath() string { return "/namespaces/" + nsName + "/tables/" + tableName }

// createTable creates the namespace and the table through one replica and
// returns the table uuid. The metadata log keeps every version, so the
// whole property history can be checked at the end.
func createTable(ctx context.Context, addr string) (string, error) {
	return createTableWith(ctx, addr, map[string]string{"write.metadata.previous-versions-max": strconv.Itoa(maxVersions)})
}

// createTableWith is createTable with the given table properties. A 503
// is retried, as any client would: it means nothing was committed, and on
// a loaded machine the first metadata write of a fresh bucket can outlast
// a replica's storage timeout (the CI run on 19fc16c failed there). A namespace that a
// retried attempt already created counts as created.
func createTableWith(ctx context.Context, addr string, props map[string]string) (string, error) {
	schema := map[string]any{"type": "struct", "schema-id": 0, "fields": []any{
		map[string]any{"id": 1, "name": "id", "type": "long", "required": true},
	}}
	var r response
	for attempt := 1; ; attempt++ {
		ns := callWith(ctx, setupClient, http.MethodPost, addr, "/namespaces", map[string]any{"namespace": []string{nsName}})
		if ns.status == http.StatusOK || (ns.status == http.StatusConflict && attempt > 1) {
			r = callWith(ctx, setupClient, http.MethodPost, addr, "/namespaces/"+nsName+"/tables", map[string]any{
				"name": tableName, "schema": schema, "properties": props,
			})
		} else {
			r = ns
		}
		if r.status != http.StatusServiceUnavailable || attempt == setupAttempts || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt) * 500 * time.Millisecond)
	}
	if r.status != http.StatusOK {
		return "", fmt.Errorf("create namespace and table: %d %s %s", r.status, r.errType, r.body)
	}
	var l loaded
	if err := json.Unmarshal(r.body, &l); err != nil || l.Metadata.TableUUID == "" {
		return "", fmt.Errorf("create table: no table-uuid in %s", r.body)
	}
	return l.Metadata.TableUUID, nil
}
