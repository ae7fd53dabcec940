package tableaccess

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/store"
)

// ReadForRegister checks a register request (identifier, access, namespace)
// and reads the metadata file it names: 400 when the location does not
// normalise or lies outside the warehouse (refused before anything is
// opened, so nothing leaks about files elsewhere), 404 NotFound when it
// cannot be read. Messages name the file relative to the warehouse.
func (a *Access) ReadForRegister(ctx context.Context, warehouse string, id ident.Ident, metadataLocation string, priv access.Privilege) (*store.Warehouse, []byte, error) {
	if metadataLocation == "" {
		return nil, nil, fault.New(fault.BadRequest, "Invalid metadata-location: empty")
	}
	w, _, err := a.CreateTarget(ctx, warehouse, id, priv)
	if err != nil {
		return nil, nil, err
	}
	loc, err := storagepath.Normalize(metadataLocation)
	if err != nil {
		return nil, nil, fault.Wrap(fault.BadRequest, err, "Invalid metadata-location: %s", fault.ClientText(err))
	}
	if !locations.WarehousePrefixes(w).Contains(loc) {
		return nil, nil, fault.New(fault.BadRequest, "Invalid metadata-location: it must be inside the warehouse")
	}
	io, err := a.FileIO(ctx, w, loc)
	if err != nil {
		return nil, nil, err
	}
	data, err := io.Read(ctx, loc)
	if err != nil {
		return nil, nil, fault.Wrap(fault.NotFound, err, "Failed to open input stream for file: %s", locations.FileName(w, w.Location, loc))
	}
	if data, err = tablemeta.Inflate(data); err != nil {
		return nil, nil, fault.Wrap(fault.BadRequest, err, "Invalid metadata file %s: %s", locations.FileName(w, w.Location, loc), err)
	}
	return w, data, nil
}

// CompactJSON is b without insignificant white space; b itself when it
// is not valid JSON (callers store only documents they checked).
func CompactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}
