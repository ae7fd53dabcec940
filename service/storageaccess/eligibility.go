package storageaccess

import (
	"context"
	"sort"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/ident"
)

// NativeWriteEligibility reports whether a table keeps Comet's native
// Parquet writer eligible: its properties, format version, location and
// the FileIO keys the catalog would vend. Errors: 403 without
// table-read-metadata, 404 when the table or the warehouse is missing,
// the errors of LoadTable (503 when the database fails).
func (b *Broker) NativeWriteEligibility(ctx context.Context, warehouse string, id ident.Ident) (credentials.Eligibility, error) {
	if err := b.d.Tables.Authorizer().Authorize(ctx, identity.From(ctx), access.PrivTableReadMetadata, access.TableResource(warehouse, id.Namespace, id.Name)); err != nil {
		return credentials.Eligibility{}, err
	}
	_, e, err := b.d.Tables.ReadTable(ctx, warehouse, id)
	if err != nil {
		return credentials.Eligibility{}, err
	}
	meta, version := e.Meta, e.Version
	w, err := b.d.Tables.Warehouse(ctx, warehouse)
	if err != nil {
		return credentials.Eligibility{}, err
	}
	// What a client asking for vended credentials gets: remote-signing
	// properties or nothing (vended keys all pass the allowlist).
	cfg, err := b.signingChoice(w, id, VendedCredentials, func() (map[string]string, error) { return meta.Properties(), nil })
	if err != nil {
		return credentials.Eligibility{}, err
	}
	return credentials.NativeWriteEligibility(tableShape(meta, version), cfg), nil
}

// tableShape extracts what the native-write check judges from parsed
// metadata: every column of the current schema (nested ones by their
// dotted names) and the fields of the default partition spec.
func tableShape(meta table.Metadata, version int) credentials.TableShape {
	shape := credentials.TableShape{FormatVersion: version, Location: meta.Location(), Properties: meta.Properties()}
	if sc := meta.CurrentSchema(); sc != nil {
		if idx, err := iceberg.IndexByID(sc); err == nil {
			for id, f := range idx {
				name, _ := sc.FindColumnName(id)
				shape.Columns = append(shape.Columns, credentials.Column{ID: id, Name: name, Type: f.Type.Type()})
			}
		}
		// Reasons come in column-id order, not map order.
		sort.Slice(shape.Columns, func(i, j int) bool { return shape.Columns[i].ID < shape.Columns[j].ID })
	}
	spec := meta.PartitionSpec()
	for _, f := range spec.Fields() {
		shape.Partition = append(shape.Partition, credentials.PartitionField{
			Name: f.Name, Transform: f.Transform.String(), SourceIDs: f.SourceIDs,
		})
	}
	return shape
}
