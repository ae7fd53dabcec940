package server

import (
	"context"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// GetEvents implements openapi.StrictServerInterface: POST
// /v1/{prefix}/events.
func (s *Server) GetEvents(ctx context.Context, req openapi.GetEventsRequestObject) (openapi.GetEventsResponseObject, error) {
	if req.Body == nil {
		return nil, fault.New(fault.BadRequest, "Invalid events query: a JSON body is required")
	}
	b := req.Body
	q := service.EventsQuery{ContinuationToken: deref(b.ContinuationToken), SinceMillis: deref(b.SinceTimestampMs),
		OperationTypes: deref(b.OperationTypes), ObjectsByName: deref(b.CatalogObjectsByName), ObjectsByUUID: deref(b.CatalogObjectsByUuid)}
	if b.PageSize != nil {
		// Given, it is 1 to 1000 as the spec says (absent: the default).
		if *b.PageSize < 1 || *b.PageSize > 1000 {
			return nil, badRequestf("page-size must be between 1 and 1000")
		}
		q.PageSize = int(*b.PageSize)
	}
	for _, t := range deref(b.ObjectTypes) {
		q.ObjectTypes = append(q.ObjectTypes, string(t))
	}
	page, err := s.rooms.events.Query(ctx, req.Prefix, q)
	if err != nil {
		return nil, err
	}
	out := openapi.GetEvents200JSONResponse{ContinuationToken: page.ContinuationToken, Events: make([]openapi.Event, len(page.Events))}
	for i, e := range page.Events {
		ev := openapi.Event{EventId: e.EventID, RequestId: e.RequestID, RequestEventCount: e.RequestEventCount,
			TimestampMs: e.TimestampMS, Operation: openapi.RawJSON(e.Operation)}
		if e.Actor != nil {
			actor := e.Actor
			ev.Actor = &actor
		}
		out.Events[i] = ev
	}
	return out, nil
}

// deref is *p, or the zero value when p is nil (an absent optional field).
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
