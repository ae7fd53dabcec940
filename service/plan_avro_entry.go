package service

import (
	"context"
	"errors"

	"github.com/lakehold/catalog/store"
)

// PlanAvroScan plans a scan of a format v1–v3 table for a client with
// read-data access. handled is false for a format v4 table (the caller
// plans it on the v4 path).
//
// TEMPORARY thin call path (h-plan3) until the PlanScan entry point of the
// scan-planning work lands: it then calls planAvro itself and this goes.
// It returns 403 without read-data access, 404 for a missing table, and
// planAvro's errors.
func (s *Service) PlanAvroScan(ctx context.Context, warehouse string, id Ident, req PlanRequest) (res PlanResult, handled bool, err error) {
	if err := s.authorize(ctx, PrivTableReadData, tableResource(warehouse, id)); err != nil {
		return PlanResult{}, true, err
	}
	w, err := s.warehouse(ctx, warehouse)
	if err != nil {
		return PlanResult{}, true, err
	}
	obj, err := s.store.ObjectGet(ctx, id.ref(w.Name, store.KindTable))
	if errors.Is(err, store.ErrNotFound) {
		return PlanResult{}, true, tableNotFound(err, id)
	}
	if err != nil {
		return PlanResult{}, true, storeErr(err, w.Name)
	}
	md, version, err := parseTableMetadata(obj.Metadata)
	if err != nil {
		return PlanResult{}, true, wrapErr(KindInternal, err, "stored metadata of %s does not parse", id)
	}
	if version >= FormatV4 {
		return PlanResult{}, false, nil
	}
	res, err = s.planAvro(ctx, w, md, req)
	return res, true, err
}
