package sigv4test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Glue is the stand-in's address and what it saw.
type Glue struct {
	// URL is the base URI to give a client (it serves /iceberg/v1/...).
	URL string
	mu  sync.Mutex
	// signatures are the Authorization headers received, valid or not.
	signatures []string
	accepted   int
}

// Table is the one table the stand-in serves, in namespace Namespace.
type Table struct {
	Namespace, Name, MetadataLocation string
	Metadata                          json.RawMessage
}

// NewGlue serves (when asked for /v1/config with warehouse=ACCOUNT), at URL+"/iceberg", a catalog with prefix
// catalogs/ACCOUNT holding tbl in its namespace, to requests signed with
// creds for region and the signing name "glue"; every other request is
// answered 403 before it is looked at. It is closed when t ends.
func NewGlue(t *testing.T, creds aws.Credentials, region, account string, tbl Table) *Glue {
	g := &Glue{}
	prefix := "/iceberg/v1/catalogs/" + account
	answers := map[string]any{
		"/iceberg/v1/config":                    map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{"prefix": "catalogs/" + account}},
		prefix + "/namespaces":                  map[string]any{"namespaces": [][]string{{tbl.Namespace}}},
		prefix + "/namespaces/" + tbl.Namespace: map[string]any{"properties": map[string]string{}},
		prefix + "/namespaces/" + tbl.Namespace + "/tables": map[string]any{
			"identifiers": []map[string]any{{"namespace": []string{tbl.Namespace}, "name": tbl.Name}}},
		prefix + "/namespaces/" + tbl.Namespace + "/tables/" + tbl.Name: map[string]any{
			"metadata-location": tbl.MetadataLocation, "metadata": tbl.Metadata},
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !g.check(r, body, creds, region) {
			refuse(w, http.StatusForbidden, "AccessDeniedException",
				"The request signature we calculated does not match the signature you provided.")
			return
		}
		key := r.URL.EscapedPath()
		switch {
		case key == "/iceberg/v1/config" && r.URL.Query().Get("warehouse") != account:
			refuse(w, http.StatusBadRequest, "InvalidInputException", "the warehouse must be the catalog id")
			return
		case r.URL.Query().Has("parent"): // the namespace has no children
			_ = json.NewEncoder(w).Encode(map[string]any{"namespaces": [][]string{}})
			return
		}
		a, ok := answers[key]
		if !ok {
			refuse(w, http.StatusNotFound, "NoSuchEntityException", "not found")
			return
		}
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(hs.Close)
	g.URL = hs.URL + "/iceberg"
	return g
}

// check verifies r and records its Authorization header.
func (g *Glue) check(r *http.Request, body []byte, creds aws.Credentials, region string) bool {
	ok := Verify(r, body, creds, region, "glue") == nil
	g.mu.Lock()
	defer g.mu.Unlock()
	g.signatures = append(g.signatures, r.Header.Get("Authorization"))
	if ok {
		g.accepted++
	}
	return ok
}

// Signatures are the Authorization headers received so far.
func (g *Glue) Signatures() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.signatures...)
}

// Accepted is how many requests carried a valid signature.
func (g *Glue) Accepted() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.accepted
}

func refuse(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
}
