package service

import (
	"sort"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/credentials"
)

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
