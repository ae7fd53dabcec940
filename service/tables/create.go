package tables

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/lakehold/catalog/internal/changeevents"
	"github.com/lakehold/catalog/internal/createdef"
	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/store"
)

// CreateTable creates (or, with StageCreate, only prepares) a table with
// fresh field, partition and sort ids. 404 when the namespace is missing,
// 409 when the name is taken by a table or view, 400 for an invalid schema,
// spec, order or format version, and for a location or write.*.path
// property outside the warehouse (location policy).
func (t *Tables) CreateTable(ctx context.Context, warehouse string, nsLevels []string, in CreateTableInput) (*TableResult, error) {
	id := ident.Ident{Namespace: nsLevels, Name: in.Name}
	w, ns, err := t.ta.CreateTarget(ctx, warehouse, id, access.PrivTableCreate)
	if err != nil {
		return nil, err
	}
	if err := t.broker.CheckVend(ctx, w, id, in.Delegation); err != nil {
		return nil, err
	}
	schema, spec, order, err := createdef.Decode(in.Schema, in.Spec, in.SortOrder)
	if err != nil {
		return nil, err
	}
	props := iceberg.Properties{}
	for k, v := range in.Properties {
		props[k] = v
	}
	version := 2
	if v, ok := props["format-version"]; ok {
		switch v {
		case "1", "2", "3", "4":
			version = int(v[0] - '0')
		default:
			return nil, fault.New(fault.BadRequest, "Unsupported format version: %s (supported: 1 to 4)", v)
		}
	}
	if err := tableaccess.GuardV4(ctx, version, "Cannot create "+id.String()); err != nil {
		return nil, err
	}
	loc, canon, err := locations.NewObjectLocation(w, ns, in.Name, in.Location, props)
	if err != nil {
		return nil, err
	}
	formatProps := iceberg.Properties{}
	for k, v := range props {
		formatProps[k] = v
	}
	for _, k := range reservedTableProperties[1:] {
		delete(formatProps, k)
	}
	if version == v4commits.FormatV4 {
		formatProps["format-version"] = "3" // built through the v3 view
	}
	if err := t.ta.ClockGuard(); err != nil {
		return nil, err
	}
	meta, err := table.NewMetadata(schema, spec, order, loc, formatProps)
	if err != nil {
		return nil, fault.Wrap(fault.BadRequest, err, "Invalid table definition: %s", fault.ClientText(err))
	}
	data, err := tablemeta.Marshal(meta, version)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode metadata")
	}
	if err := t.ta.CheckNewMetadata(nil, meta, data); err != nil {
		return nil, err
	}
	if in.StageCreate {
		// Nothing is persisted; the name is only checked to fail early.
		for _, k := range []store.ObjectKind{store.KindTable, store.KindView, store.KindFunction} {
			if _, err := t.store.ObjectMetadataLocation(ctx, tableaccess.ObjectRef(id, warehouse, k)); err == nil {
				return nil, tableaccess.AlreadyExists(&store.AlreadyExistsError{Kind: k}, store.KindTable, id)
			}
		}
		if err := prepareStagedMetadataDir(w, canon, props); err != nil {
			return nil, err
		}
		return t.tableResult(ctx, w, id, "", data, canon, in.Delegation)
	}
	metaLoc := tableaccess.NewMetadataLocation(loc, meta.Properties(), "")
	if err := t.ta.WriteFile(ctx, w, metaLoc, data); err != nil {
		return nil, err
	}
	obj := &store.Object{
		Warehouse: warehouse, Namespace: nsLevels, Name: in.Name, Kind: store.KindTable,
		Location: canon, MetadataLocation: metaLoc, Metadata: data, RefsMetadata: data, FormatVersion: version,
	}
	ectx := t.ta.WithEvent(ctx, func() store.Event {
		return changeevents.Create(changeevents.CreateTable, tableaccess.TableObject(warehouse, id, meta), tableaccess.Who(ctx), changeevents.CreateTableUpdates(meta, version))
	})
	if err := t.store.ObjectCreate(ectx, obj); err != nil {
		if !commitengine.MayHaveLanded(err) {
			t.ta.DeleteTableFile(ctx, w, canon, metaLoc)
		}
		return nil, tableaccess.PutErr(err, store.KindTable, id, warehouse)
	}
	return t.tableResult(ctx, w, id, metaLoc, data, canon, in.Delegation)
}
