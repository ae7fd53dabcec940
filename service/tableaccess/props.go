package tableaccess

import "github.com/lakehold/catalog/store"

// WithWarehouseDefaults is props with, for each of keys the table does not
// set, the warehouse's value: Iceberg's own table properties
// (history.expire.*, write.column-files.compact.*) may be given a
// warehouse-wide default like the lakehold.* policies.
func WithWarehouseDefaults(w *store.Warehouse, props map[string]string, keys ...string) map[string]string {
	out := make(map[string]string, len(props)+len(keys))
	for k, v := range props {
		out[k] = v
	}
	for _, k := range keys {
		if _, ok := out[k]; !ok {
			if v, ok := w.Properties[k]; ok {
				out[k] = v
			}
		}
	}
	return out
}
