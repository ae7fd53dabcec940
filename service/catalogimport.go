package service

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/lakehold/catalog/internal/catalogimport"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/access"
)

// The bounds of an import run in a request (the management route): the
// server's write timeout (120 s by default) must leave time to answer, and
// a catalog with more objects is imported with `catalog import` or a
// namespace at a time. Each answer of the source is read up to
// MaxImportBody (the sign-in's up to MaxImportSignInBody), so a source
// cannot make the server hold much memory; at most MaxConcurrentImports
// run at once in one server process.
const (
	MaxImportObjects     = 2000
	ImportTimeout        = 100 * time.Second
	MaxImportBody        = 16 << 20
	MaxImportSignInBody  = 1 << 20
	MaxConcurrentImports = 2
)

// ImportInput is what an import into a warehouse takes: the source and
// its credential (used for this call only, never stored or logged), the
// namespaces to import (nil: all) and whether to write nothing.
type ImportInput struct {
	Source     catalogimport.Endpoint
	Namespaces [][]string
	DryRun     bool
}

// ImportCatalog imports the source's namespaces, tables and views into
// warehouse, as `catalog import` does, as the caller: each object passes
// the same checks and privileges as a client's create or register. Only
// a caller with manage-warehouses on the warehouse may run it (403
// otherwise, 404 when the warehouse is missing or hidden). It fails with
// 400 for a source URI that is not plain http(s) or carries user info, a
// source to be signed with SigV4 (AWS Glue: the signature would be made
// with the server's own AWS identity on behalf of a caller who need not
// hold it; `catalog import` signs with the caller's), or a run over
// MaxImportObjects (nothing written), with 503 when MaxConcurrentImports
// are running already, and with 422 when the source cannot be reached,
// refuses the sign-in or a read: the error says which step and the
// source's status, never the source's own text. When this catalog fails
// (503 database unavailable, 500) before anything was written, that error
// is the answer. A run stopped part way answers the report so far with
// Stopped set.
func (s *Service) ImportCatalog(ctx context.Context, warehouse string, in ImportInput) (*catalogimport.Report, error) {
	if err := s.ta.Authorize(ctx, PrivManageWarehouses, access.WarehouseResource(warehouse)); err != nil {
		return nil, err
	}
	if _, err := s.whs.Get(ctx, warehouse); err != nil {
		return nil, err
	}
	if err := checkSourceURI("uri", in.Source.URI, true); err != nil {
		return nil, err
	}
	if err := checkSourceURI("oauth2-server-uri", in.Source.OAuth2ServerURI, false); err != nil {
		return nil, err
	}
	// The route never sets SigV4 (its body has no such field); this
	// guards other callers of ImportCatalog.
	if in.Source.SigV4 != nil {
		return nil, fault.New(fault.BadRequest, "The import route does not sign with SigV4; import from AWS Glue with catalog import")
	}
	if in.Source.Credential != "" && in.Source.Token != "" {
		return nil, fault.New(fault.BadRequest, "Give the source a credential or a token, not both")
	}
	// A bound on this process's memory, sockets and time, not a lock:
	// imports into the same warehouse from two processes (or one after
	// the other) are each safe, as every write is a plain create or
	// register. The caller is told to retry rather than made to wait.
	select {
	case s.imports <- struct{}{}:
		defer func() { <-s.imports }()
	default:
		return nil, fault.New(fault.Unavailable, "Another import is running; retry")
	}
	ctx, cancel := context.WithTimeout(ctx, ImportTimeout)
	defer cancel()
	src := in.Source
	src.Terse, src.MaxBody, src.MaxSignInBody = true, MaxImportBody, MaxImportSignInBody
	source, err := catalogimport.OpenSource(ctx, src)
	if err != nil {
		return nil, fault.New(fault.Unprocessable, "The source catalog could not be opened: %s", err)
	}
	dst := &importTarget{s: s, warehouse: warehouse}
	rep, err := catalogimport.Run(ctx, source, dst, catalogimport.Options{Namespaces: in.Namespaces, DryRun: in.DryRun, MaxObjects: MaxImportObjects})
	var le *catalogimport.LimitError
	switch {
	case errors.As(err, &le):
		return nil, fault.New(fault.BadRequest, "%s", le.Error())
	case ownFault(err) != nil && !rep.Wrote():
		return nil, ownFault(err)
	case err != nil && len(rep.Items) == 0:
		return nil, fault.New(fault.Unprocessable, "The import stopped: %s", err)
	}
	return rep, nil
}

// ownFault is the fault in err when it is this catalog failing (its
// database unavailable, an internal error), nil when err is the source's
// or a refusal: the client is answered that fault, to retry, rather than
// told the import failed.
func ownFault(err error) *fault.Error {
	var fe *fault.Error
	if errors.As(err, &fe) && (fe.Kind == fault.Unavailable || fe.Kind == fault.Internal) {
		return fe
	}
	return nil
}

// checkSourceURI accepts an absolute http or https URI without user info
// (a password there would be one more place a secret travels and is
// echoed) or fragment; "" only when optional.
func checkSourceURI(field, raw string, required bool) error {
	if raw == "" && !required {
		return nil
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return fault.New(fault.BadRequest, "The source %s must be an absolute http or https URI", field)
	case u.User != nil:
		return fault.New(fault.BadRequest, "The source %s must not carry user info; give the credential or token in their own fields", field)
	case u.Fragment != "" || strings.ContainsAny(raw, " \t\r\n"):
		return fault.New(fault.BadRequest, "The source %s must have no fragment or spaces", field)
	}
	return nil
}
