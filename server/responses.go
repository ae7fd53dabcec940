package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/server/pipeline"
	"github.com/lakehold/catalog/service"
)

// tableResponse writes a LoadTableResult (or CommitTableResponse) with the
// stored metadata bytes spliced in, so that large metadata is never decoded
// and re-encoded on the hot path.
type tableResponse struct {
	res  *service.TableResult
	etag string
}

type storageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

func (t tableResponse) write(w http.ResponseWriter) error {
	// The metadata (megabytes on tables with long history) is written as
	// stored, between a small head and tail, never copied into a buffer.
	var head, tail bytes.Buffer
	head.WriteByte('{')
	if t.res.MetadataLocation != "" {
		head.WriteString(`"metadata-location":`)
		loc, _ := json.Marshal(t.res.MetadataLocation)
		head.Write(loc)
		head.WriteByte(',')
	}
	head.WriteString(`"metadata":`)
	tail.WriteString(`,"config":`)
	cfg := t.res.Config
	if cfg == nil {
		cfg = map[string]string{}
	}
	c, _ := json.Marshal(cfg)
	tail.Write(c)
	if len(t.res.StorageCredentials) > 0 {
		creds := make([]storageCredential, 0, len(t.res.StorageCredentials))
		for _, sc := range t.res.StorageCredentials {
			creds = append(creds, storageCredential{Prefix: sc.Prefix, Config: sc.Config})
		}
		b, _ := json.Marshal(creds)
		tail.WriteString(`,"storage-credentials":`)
		tail.Write(b)
	}
	if rs := t.res.RemoteSigning; rs != nil {
		headers := openapi.MultiValuedMap(rs.Headers)
		b, _ := json.Marshal(openapi.RemoteSigningConfig{Properties: &rs.Properties, Headers: &headers})
		tail.WriteString(`,"remote-signing-config":`)
		tail.Write(b)
	}
	tail.WriteByte('}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(head.Len()+len(t.res.Metadata)+tail.Len()))
	if t.etag != "" {
		w.Header().Set("ETag", t.etag)
	}
	if t.res.Warning != "" {
		w.Header().Set("Warning", warning(t.res.Warning))
	}
	if len(cfg) > 0 || len(t.res.StorageCredentials) > 0 {
		// Vended credentials: no cache may keep this answer, and an
		// Idempotency-Key replay gets it without them (package pipeline).
		w.Header().Set("Cache-Control", "no-store")
		if rs, ok := w.(pipeline.ReplaySetter); ok {
			rs.SetReplay(slices.Concat(head.Bytes(), t.res.Metadata, []byte(`,"config":{}}`)))
		}
	}
	w.WriteHeader(http.StatusOK)
	for _, part := range [][]byte{head.Bytes(), t.res.Metadata, tail.Bytes()} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

func (t tableResponse) VisitCreateTableResponse(w http.ResponseWriter) error   { return t.write(w) }
func (t tableResponse) VisitRegisterTableResponse(w http.ResponseWriter) error { return t.write(w) }
func (t tableResponse) VisitLoadTableResponse(w http.ResponseWriter) error     { return t.write(w) }
func (t tableResponse) VisitUpdateTableResponse(w http.ResponseWriter) error   { return t.write(w) }

// viewResponse writes a LoadViewResult from stored bytes.
type viewResponse struct{ res *service.ViewResult }

func (v viewResponse) write(w http.ResponseWriter) error {
	var buf bytes.Buffer
	buf.WriteString(`{"metadata-location":`)
	loc, _ := json.Marshal(v.res.MetadataLocation)
	buf.Write(loc)
	buf.WriteString(`,"metadata":`)
	buf.Write(v.res.Metadata)
	buf.WriteString(`,"config":{}}`)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := buf.WriteTo(w)
	return err
}

func (v viewResponse) VisitCreateViewResponse(w http.ResponseWriter) error         { return v.write(w) }
func (v viewResponse) VisitLoadViewResponse(w http.ResponseWriter) error           { return v.write(w) }
func (v viewResponse) VisitReplaceViewResponse(w http.ResponseWriter) error        { return v.write(w) }
func (v viewResponse) VisitRegisterViewResponse(w http.ResponseWriter) error       { return v.write(w) }
func (t tableResponse) VisitCommitFilesResponse(w http.ResponseWriter) error       { return t.write(w) }
func (t tableResponse) VisitCommitColumnFilesResponse(w http.ResponseWriter) error { return t.write(w) }
