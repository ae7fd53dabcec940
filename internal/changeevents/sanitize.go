package changeevents

import (
	"encoding/json"
	"strings"
)

// Sanitize returns updates or requirements (a JSON list) fit for an event:
// the values of set-properties keys that name a credential are replaced,
// and so is every string that is a path or URI outside location (the
// object's base location). JSON that does not decode comes back as an empty
// list: an event never carries what it could not inspect.
func Sanitize(list json.RawMessage, location string) json.RawMessage {
	if len(list) == 0 || string(list) == "null" {
		return json.RawMessage("[]")
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(list)))
	dec.UseNumber() // snapshot ids are 64-bit: no float round trip
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage("[]")
	}
	if _, ok := v.([]any); !ok {
		return json.RawMessage("[]")
	}
	out, err := json.Marshal(sanitize(v, location, false))
	if err != nil {
		return json.RawMessage("[]")
	}
	return out
}

// sanitize walks v; props is set while inside a set-properties update's
// "updates" map, whose values are redacted by key.
func sanitize(v any, location string, props bool) any {
	switch t := v.(type) {
	case map[string]any:
		isSetProps := t["action"] == "set-properties"
		for k, x := range t {
			if props {
				if IsSecretKey(k) {
					t[k] = Redacted
					continue
				}
			}
			t[k] = sanitize(x, location, isSetProps && k == "updates")
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = sanitize(x, location, false)
		}
		return t
	case string:
		if looksLikePath(t) && !Under(t, location) {
			return Redacted
		}
		return t
	}
	return v
}

// looksLikePath reports whether s is a URI or an absolute path.
func looksLikePath(s string) bool {
	return strings.Contains(s, "://") || strings.HasPrefix(s, "/")
}

// Under reports whether path is location itself or inside it.
func Under(path, location string) bool {
	if location == "" {
		return false
	}
	loc := strings.TrimSuffix(location, "/")
	return path == loc || strings.HasPrefix(path, loc+"/")
}
