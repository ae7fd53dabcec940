package createdef

import (
	"encoding/json"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
)

// Decode decodes a create request's schema, partition spec and sort order
// (raw JSON; spec and order may be absent or null) and gives them fresh
// ids: a 400 fault naming the part that does not decode.
func Decode(rawSchema, rawSpec, rawOrder json.RawMessage) (*iceberg.Schema, *iceberg.PartitionSpec, table.SortOrder, error) {
	order := table.UnsortedSortOrder
	var reqSchema iceberg.Schema
	if err := json.Unmarshal(rawSchema, &reqSchema); err != nil {
		return nil, nil, order, fault.Wrap(fault.BadRequest, err, "Invalid schema: %s", SchemaText(rawSchema, err))
	}
	schema, specJSON, orderJSON, err := freshCreateIDs(&reqSchema, rawSpec, rawOrder)
	if err != nil {
		return nil, nil, order, fault.Wrap(fault.BadRequest, err, "Invalid table definition: %s", fault.ClientText(err))
	}
	var spec *iceberg.PartitionSpec
	if len(specJSON) > 0 && string(specJSON) != "null" {
		spec = &iceberg.PartitionSpec{}
		if err := json.Unmarshal(specJSON, spec); err != nil {
			return nil, nil, order, fault.Wrap(fault.BadRequest, err, "Invalid partition spec: %s", fault.ClientText(err))
		}
	}
	if len(orderJSON) > 0 && string(orderJSON) != "null" {
		if err := json.Unmarshal(orderJSON, &order); err != nil {
			return nil, nil, order, fault.Wrap(fault.BadRequest, err, "Invalid write order: %s", fault.ClientText(err))
		}
	}
	return schema, spec, order, nil
}
