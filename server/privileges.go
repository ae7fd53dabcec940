package server

import (
	"context"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// GetEffectivePrivileges implements openapi.StrictServerInterface: the
// caller's privileges on one securable. 400 for an ill-formed resource
// (bad namespace encoding included), 503 when the grants cannot be read.
func (s *Server) GetEffectivePrivileges(ctx context.Context, req openapi.GetEffectivePrivilegesRequestObject) (openapi.GetEffectivePrivilegesResponseObject, error) {
	q := req.Params
	r := service.Resource{Kind: service.ResourceKind(q.Kind)}
	if q.Warehouse != nil {
		r.Warehouse = *q.Warehouse
	}
	if q.Namespace != nil {
		levels, err := decodeNamespace(*q.Namespace)
		if err != nil {
			return nil, err
		}
		r.Namespace = levels
	}
	if q.Name != nil {
		r.Name = *q.Name
	}
	held, err := s.svc.EffectivePrivileges(ctx, r)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(held))
	for i, p := range held {
		out[i] = string(p)
	}
	return openapi.GetEffectivePrivileges200JSONResponse{Resource: grantJSON(service.Grant{On: r}).Resource, Privileges: out}, nil
}
