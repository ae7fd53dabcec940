package createdef

import (
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go"
)

// freshCreateIDs assigns fresh field ids to a create request's schema
// (top-level fields first, as Iceberg does) and rewrites the source ids of
// the request's partition spec and sort order to match, by column name.
// Clients may number their fields from 0 (Spark does); iceberg-go rejects a
// partition source id of 0 while decoding, so the remap happens on the JSON
// before the spec and order are decoded.
func freshCreateIDs(schema *iceberg.Schema, spec, order json.RawMessage) (*iceberg.Schema, json.RawMessage, json.RawMessage, error) {
	fresh, err := iceberg.AssignFreshSchemaIDs(schema, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	remap := func(old int) (int, error) {
		name, ok := schema.FindColumnName(old)
		if !ok {
			return 0, fmt.Errorf("source id %d is not a field of the schema", old)
		}
		f, ok := fresh.FindFieldByName(name)
		if !ok {
			return 0, fmt.Errorf("field %s lost its id", name)
		}
		return f.ID, nil
	}
	rewrite := func(raw json.RawMessage, idKeys ...string) (json.RawMessage, error) {
		if len(raw) == 0 || string(raw) == "null" {
			return raw, nil
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		var fields []map[string]json.RawMessage
		if f, ok := doc["fields"]; ok {
			if err := json.Unmarshal(f, &fields); err != nil {
				return nil, err
			}
		}
		for _, f := range fields {
			for _, key := range idKeys {
				v, ok := f[key]
				if !ok {
					continue
				}
				var id int
				if err := json.Unmarshal(v, &id); err != nil {
					return nil, fmt.Errorf("%s: %w", key, err)
				}
				nid, err := remap(id)
				if err != nil {
					return nil, err
				}
				f[key], _ = json.Marshal(nid)
			}
			if ids, ok := f["source-ids"]; ok {
				var list []int
				if err := json.Unmarshal(ids, &list); err != nil {
					return nil, fmt.Errorf("source-ids: %w", err)
				}
				for i, id := range list {
					if list[i], err = remap(id); err != nil {
						return nil, err
					}
				}
				f["source-ids"], _ = json.Marshal(list)
			}
		}
		doc["fields"], _ = json.Marshal(fields)
		return json.Marshal(doc)
	}
	newSpec, err := rewrite(spec, "source-id")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("partition spec: %w", err)
	}
	newOrder, err := rewrite(order, "source-id")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("write order: %w", err)
	}
	return fresh, newSpec, newOrder, nil
}
