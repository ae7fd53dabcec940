package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

func warehouseJSON(w *service.Warehouse) openapi.Warehouse {
	props := w.Properties
	if props == nil {
		props = map[string]string{}
	}
	return openapi.Warehouse{Name: w.Name, Location: w.Location, Properties: props}
}

// ListWarehouses implements openapi.StrictServerInterface.
func (s *Server) ListWarehouses(ctx context.Context, _ openapi.ListWarehousesRequestObject) (openapi.ListWarehousesResponseObject, error) {
	ws, err := s.svc.ListWarehouses(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]openapi.Warehouse, 0, len(ws))
	for _, w := range ws {
		out = append(out, warehouseJSON(w))
	}
	return openapi.ListWarehouses200JSONResponse{Warehouses: out}, nil
}

// CreateWarehouse implements openapi.StrictServerInterface.
func (s *Server) CreateWarehouse(ctx context.Context, req openapi.CreateWarehouseRequestObject) (openapi.CreateWarehouseResponseObject, error) {
	var props map[string]string
	if req.Body.Properties != nil {
		props = *req.Body.Properties
	}
	w, err := s.svc.CreateWarehouse(ctx, req.Body.Name, req.Body.Location, props)
	if err != nil {
		return nil, err
	}
	return openapi.CreateWarehouse200JSONResponse(warehouseJSON(w)), nil
}

// GetWarehouse implements openapi.StrictServerInterface.
func (s *Server) GetWarehouse(ctx context.Context, req openapi.GetWarehouseRequestObject) (openapi.GetWarehouseResponseObject, error) {
	w, err := s.svc.GetWarehouse(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	return openapi.GetWarehouse200JSONResponse(warehouseJSON(w)), nil
}

// DeleteWarehouse implements openapi.StrictServerInterface.
func (s *Server) DeleteWarehouse(ctx context.Context, req openapi.DeleteWarehouseRequestObject) (openapi.DeleteWarehouseResponseObject, error) {
	if err := s.rooms.warehouses.Delete(ctx, req.Name); err != nil {
		return nil, err
	}
	return openapi.DeleteWarehouse204Response{}, nil
}

// profileJSON is a storage profile response. The generated response types
// are named byte-slice types without json.RawMessage's MarshalJSON, so
// encoding them would produce a base64 string; this one writes the profile
// as a JSON object.
type profileJSON []byte

func (p profileJSON) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(append(p, '\n'))
	return err
}

// VisitSetStorageProfileResponse implements openapi.SetStorageProfileResponseObject.
func (p profileJSON) VisitSetStorageProfileResponse(w http.ResponseWriter) error { return p.write(w) }

// VisitGetStorageProfileResponse implements openapi.GetStorageProfileResponseObject.
func (p profileJSON) VisitGetStorageProfileResponse(w http.ResponseWriter) error { return p.write(w) }

// redactedProfile encodes a profile the service already stripped of
// secrets.
func redactedProfile(p any) (profileJSON, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, &fault.Error{Kind: fault.Internal, Message: "Internal server error", Err: err}
	}
	return profileJSON(b), nil
}

// SetStorageProfile implements openapi.StrictServerInterface.
func (s *Server) SetStorageProfile(ctx context.Context, req openapi.SetStorageProfileRequestObject) (openapi.SetStorageProfileResponseObject, error) {
	p, err := s.rooms.warehouses.SetStorageProfile(ctx, req.Name, *req.Body)
	if err != nil {
		return nil, err
	}
	return redactedProfile(p)
}

// GetStorageProfile implements openapi.StrictServerInterface.
func (s *Server) GetStorageProfile(ctx context.Context, req openapi.GetStorageProfileRequestObject) (openapi.GetStorageProfileResponseObject, error) {
	p, err := s.rooms.warehouses.StorageProfile(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, &fault.Error{Kind: fault.NotFound, Message: "Warehouse " + req.Name + " has no storage profile"}
	}
	return redactedProfile(p)
}
