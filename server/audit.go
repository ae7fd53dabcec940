package server

import (
	"context"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// ListAuditEvents implements openapi.StrictServerInterface.
func (s *Server) ListAuditEvents(ctx context.Context, req openapi.ListAuditEventsRequestObject) (openapi.ListAuditEventsResponseObject, error) {
	p := req.Params
	if p.PageSize != nil && *p.PageSize < 1 {
		return nil, badRequestf("pageSize must be at least 1")
	}
	var f service.AuditFilter
	for _, v := range []struct {
		dst *string
		src *string
	}{{&f.Principal, p.Principal}, {&f.ResourcePrefix, p.Resource}, {&f.Action, p.Action}} {
		if v.src != nil {
			*v.dst = *v.src
		}
	}
	if p.Since != nil {
		f.Since = *p.Since
	}
	if p.Until != nil {
		f.Until = *p.Until
	}
	evs, next, err := s.svc.ListAudit(ctx, f, page(p.PageToken, p.PageSize))
	if err != nil {
		return nil, err
	}
	out := make([]openapi.AuditEvent, 0, len(evs))
	for _, e := range evs {
		out = append(out, openapi.AuditEvent{Id: e.ID, At: e.At.UTC(), RequestId: e.RequestID, Principal: e.Principal,
			Action: e.Action, Resource: e.Resource, Decision: openapi.AuditEventDecision(e.Decision), Status: e.Status, Detail: e.Detail})
	}
	return openapi.ListAuditEvents200JSONResponse{Events: out, NextPageToken: nextToken(next)}, nil
}
