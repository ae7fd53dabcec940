package server

import (
	"context"
	"fmt"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/openapi"
)

// GetConfig implements openapi.StrictServerInterface. The warehouse may be
// given by name or by location; without one the default warehouse answers.
// The warehouse name becomes overrides.prefix.
func (s *Server) GetConfig(ctx context.Context, req openapi.GetConfigRequestObject) (openapi.GetConfigResponseObject, error) {
	name := s.cfg.DefaultWarehouse
	if req.Params.Warehouse != nil && *req.Params.Warehouse != "" {
		name = *req.Params.Warehouse
	}
	if name == "" {
		return nil, &fault.Error{Kind: fault.BadRequest, Message: "No warehouse given and no default warehouse configured: pass ?warehouse=NAME"}
	}
	w, err := s.svc.ConfigWarehouse(ctx, name)
	if err != nil {
		return nil, err
	}
	endpoints := append([]string(nil), s.endpoints...)
	lifetime := isoDuration(s.cfg.IdempotencyLifetime)
	defaults, _ := credentials.FilterCatalogConfig(map[string]string{})
	overrides, _ := credentials.FilterCatalogConfig(map[string]string{"prefix": w.Name})
	return openapi.GetConfig200JSONResponse{
		Defaults:               defaults,
		Overrides:              overrides,
		Endpoints:              &endpoints,
		IdempotencyKeyLifetime: &lifetime,
	}, nil
}

// isoDuration formats d as an ISO-8601 duration (PT30M, PT1H30M, PT45S).
func isoDuration(d interface{ Seconds() float64 }) string {
	secs := int64(d.Seconds())
	h, m, sec := secs/3600, (secs%3600)/60, secs%60
	out := "PT"
	if h > 0 {
		out += fmt.Sprintf("%dH", h)
	}
	if m > 0 {
		out += fmt.Sprintf("%dM", m)
	}
	if sec > 0 || out == "PT" {
		out += fmt.Sprintf("%dS", sec)
	}
	return out
}
