package server

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/tables"
	"github.com/lakehold/catalog/store"
)

func raw(p *openapi.RawJSON) json.RawMessage {
	if p == nil {
		return nil
	}
	return *p
}

// delegation reads X-Iceberg-Access-Delegation: which of
// vended-credentials and remote-signing the client accepts.
func delegation(h *openapi.AccessDelegationParam) service.Delegation {
	d := service.NoDelegation
	if h == nil {
		return d
	}
	for _, v := range strings.Split(*h, ",") {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "vended-credentials":
			d |= service.VendedCredentials
		case "remote-signing":
			d |= service.RemoteSigning
		}
	}
	return d
}

// ListTables implements openapi.StrictServerInterface.
func (s *Server) ListTables(ctx context.Context, req openapi.ListTablesRequestObject) (openapi.ListTablesResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	if req.Params.PageSize != nil && *req.Params.PageSize < 1 {
		return nil, badRequestf("pageSize must be at least 1")
	}
	names, next, err := s.rooms.tables.List(ctx, req.Prefix, levels, store.KindTable, listPage(req.Params.PageToken, req.Params.PageSize))
	if err != nil {
		return nil, err
	}
	return identifierList{levels: levels, names: names, next: next}, nil
}

// CreateTable implements openapi.StrictServerInterface.
func (s *Server) CreateTable(ctx context.Context, req openapi.CreateTableRequestObject) (openapi.CreateTableResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	in := service.CreateTableInput{
		Name:       req.Body.Name,
		Schema:     req.Body.Schema,
		Spec:       raw(req.Body.PartitionSpec),
		SortOrder:  raw(req.Body.WriteOrder),
		Delegation: delegation(req.Params.XIcebergAccessDelegation),
	}
	if req.Body.Location != nil {
		in.Location = *req.Body.Location
	}
	if req.Body.StageCreate != nil {
		in.StageCreate = *req.Body.StageCreate
	}
	if req.Body.Properties != nil {
		in.Properties = *req.Body.Properties
	}
	res, err := s.rooms.tables.CreateTable(ctx, req.Prefix, levels, in)
	if err != nil {
		return nil, err
	}
	etag := ""
	if res.MetadataLocation != "" {
		etag = tables.ETag(res.MetadataLocation, "all")
	}
	return tableResponse{res: res, etag: etag}, nil
}

// RegisterTable implements openapi.StrictServerInterface.
func (s *Server) RegisterTable(ctx context.Context, req openapi.RegisterTableRequestObject) (openapi.RegisterTableResponseObject, error) {
	levels, err := decodeNamespace(req.Namespace)
	if err != nil {
		return nil, err
	}
	overwrite := req.Body.Overwrite != nil && *req.Body.Overwrite
	res, err := s.rooms.tables.RegisterTable(ctx, req.Prefix, levels, req.Body.Name, req.Body.MetadataLocation, overwrite,
		delegation(req.Params.XIcebergAccessDelegation))
	if err != nil {
		return nil, err
	}
	return tableResponse{res: res, etag: tables.ETag(res.MetadataLocation, "all")}, nil
}

// LoadTable implements openapi.StrictServerInterface. With If-None-Match
// equal to the current tag it answers 304 after one indexed lookup.
func (s *Server) LoadTable(ctx context.Context, req openapi.LoadTableRequestObject) (openapi.LoadTableResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	mode := "all"
	if req.Params.Snapshots != nil {
		mode = string(*req.Params.Snapshots)
	}
	deleg := delegation(req.Params.XIcebergAccessDelegation)
	vend := deleg != service.NoDelegation
	if inm := req.Params.IfNoneMatch; inm != nil && *inm != "" && !vend {
		// With vended credentials the body changes without the metadata
		// changing, so revalidation is only offered without them.
		etag, err := s.rooms.tables.TableETag(ctx, req.Prefix, id, mode)
		if err != nil {
			return nil, err
		}
		if etagMatches(*inm, etag) {
			return openapi.LoadTable304Response{}, nil
		}
	}
	res, err := s.rooms.tables.LoadTable(ctx, req.Prefix, id, mode, deleg)
	if err != nil {
		return nil, err
	}
	etag := ""
	if !vend {
		etag = tables.ETag(res.MetadataLocation, mode)
	}
	return tableResponse{res: res, etag: etag}, nil
}

// etagMatches implements If-None-Match comparison (weak, list, or *).
func etagMatches(header, etag string) bool {
	for _, part := range strings.Split(header, ",") {
		t := strings.TrimSpace(part)
		if t == "*" {
			return true
		}
		t = strings.TrimPrefix(t, "W/")
		if t == etag || `"`+t+`"` == etag {
			return true
		}
	}
	return false
}

// TableExists implements openapi.StrictServerInterface.
func (s *Server) TableExists(ctx context.Context, req openapi.TableExistsRequestObject) (openapi.TableExistsResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	if err := s.rooms.tables.TableExists(ctx, req.Prefix, id); err != nil {
		return nil, err
	}
	return openapi.TableExists204Response{}, nil
}

// UpdateTable implements openapi.StrictServerInterface (commitTable).
func (s *Server) UpdateTable(ctx context.Context, req openapi.UpdateTableRequestObject) (openapi.UpdateTableResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	res, err := s.svc.CommitTable(ctx, req.Prefix, service.TableChange{
		Ident: id, Requirements: req.Body.Requirements, Updates: req.Body.Updates,
	})
	if err != nil {
		return nil, err
	}
	return tableResponse{res: res, etag: tables.ETag(res.MetadataLocation, "all")}, nil
}

// DropTable implements openapi.StrictServerInterface.
func (s *Server) DropTable(ctx context.Context, req openapi.DropTableRequestObject) (openapi.DropTableResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	purge := false
	if p := req.Params.PurgeRequested; p != nil && *p != "" {
		// PyIceberg sends Python's "True"/"False".
		if purge, err = strconv.ParseBool(strings.ToLower(*p)); err != nil {
			return nil, badRequestf("purgeRequested must be true or false")
		}
	}
	if err := s.rooms.tables.DropTable(ctx, req.Prefix, id, purge); err != nil {
		return nil, err
	}
	return openapi.DropTable204Response{}, nil
}

// UnregisterTable implements openapi.StrictServerInterface.
func (s *Server) UnregisterTable(ctx context.Context, req openapi.UnregisterTableRequestObject) (openapi.UnregisterTableResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	res, err := s.rooms.tables.UnregisterTable(ctx, req.Prefix, id)
	if err != nil {
		return nil, err
	}
	return openapi.UnregisterTable200JSONResponse{MetadataLocation: res.MetadataLocation, Metadata: openapi.RawJSON(res.Metadata)}, nil
}

// RenameTable implements openapi.StrictServerInterface.
func (s *Server) RenameTable(ctx context.Context, req openapi.RenameTableRequestObject) (openapi.RenameTableResponseObject, error) {
	from := service.Ident{Namespace: req.Body.Source.Namespace, Name: req.Body.Source.Name}
	to := service.Ident{Namespace: req.Body.Destination.Namespace, Name: req.Body.Destination.Name}
	if err := s.rooms.tables.Rename(ctx, req.Prefix, store.KindTable, from, to); err != nil {
		return nil, err
	}
	return openapi.RenameTable204Response{}, nil
}

// CommitTransaction implements openapi.StrictServerInterface.
func (s *Server) CommitTransaction(ctx context.Context, req openapi.CommitTransactionRequestObject) (openapi.CommitTransactionResponseObject, error) {
	changes := make([]service.TableChange, 0, len(req.Body.TableChanges))
	for i, c := range req.Body.TableChanges {
		if c.Identifier == nil {
			return nil, badRequestf("table-changes[%d] has no identifier", i)
		}
		changes = append(changes, service.TableChange{
			Ident:        service.Ident{Namespace: c.Identifier.Namespace, Name: c.Identifier.Name},
			Requirements: c.Requirements, Updates: c.Updates,
		})
	}
	if err := s.rooms.commits.CommitTransaction(ctx, req.Prefix, changes); err != nil {
		return nil, err
	}
	return openapi.CommitTransaction204Response{}, nil
}

// NativeWriteEligibility implements openapi.StrictServerInterface.
func (s *Server) NativeWriteEligibility(ctx context.Context, req openapi.NativeWriteEligibilityRequestObject) (openapi.NativeWriteEligibilityResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	e, err := s.rooms.storage.NativeWriteEligibility(ctx, req.Prefix, id)
	if err != nil {
		return nil, err
	}
	return openapi.NativeWriteEligibility200JSONResponse{Eligible: e.Eligible, Reasons: eligibilityNotes(e.Reasons),
		Warnings: eligibilityNotes(e.Warnings)}, nil
}

// eligibilityNotes is rs on the wire (never null).
func eligibilityNotes(rs []credentials.Reason) []openapi.EligibilityNote {
	out := make([]openapi.EligibilityNote, 0, len(rs))
	for _, r := range rs {
		n := openapi.EligibilityNote{Code: r.Code, Message: r.Message}
		if r.Key != "" {
			n.Key = &r.Key
		}
		out = append(out, n)
	}
	return out
}

// LoadCredentials implements openapi.StrictServerInterface.
func (s *Server) LoadCredentials(ctx context.Context, req openapi.LoadCredentialsRequestObject) (openapi.LoadCredentialsResponseObject, error) {
	id, err := ident(req.Namespace, req.Table)
	if err != nil {
		return nil, err
	}
	creds, err := s.rooms.storage.LoadCredentials(ctx, req.Prefix, id)
	if err != nil {
		return nil, err
	}
	out := openapi.LoadCredentials200JSONResponse{StorageCredentials: []openapi.StorageCredential{}}
	for _, c := range creds {
		out.StorageCredentials = append(out.StorageCredentials, openapi.StorageCredential{Prefix: c.Prefix, Config: c.Config})
	}
	return out, nil
}
