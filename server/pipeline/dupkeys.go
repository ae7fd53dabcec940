package pipeline

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// authorizedBodyRoute reports whether the body of a request to path names
// what the request is authorized on: the management routes (grants,
// warehouses, undrop) and renames (source and destination).
func authorizedBodyRoute(path string) bool {
	return strings.HasPrefix(path, "/management/") || strings.HasSuffix(path, "/tables/rename") || strings.HasSuffix(path, "/views/rename")
}

// duplicateKey returns a key that appears twice in one object of the
// JSON document body, compared as Go's decoder matches struct fields
// (case-insensitively), or "" when there is none or body is not JSON (the
// route's decoder answers that). Go's decoder keeps the last of
// duplicates; a proxy, log or audit reader in front may keep the first:
// refused, no two readers can disagree about what was asked.
func duplicateKey(body []byte) string {
	type frame struct {
		object  bool
		wantKey bool
		keys    map[string]bool
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			if k, ok := tok.(string); ok {
				fold := strings.ToLower(strings.ToUpper(k))
				if top.keys[fold] {
					return k
				}
				top.keys[fold] = true
				top.wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true, keys: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return ""
			}
			top = stack[len(stack)-1]
		}
		if top != nil && top.object {
			top.wantKey = true // a value ended: a key or the end comes next
		}
	}
}

// clipKey bounds a key echoed in an error message.
func clipKey(k string) string {
	if len(k) <= 64 {
		return k
	}
	for i := 64; i > 0; i-- {
		if utf8.RuneStart(k[i]) {
			return k[:i] + "…"
		}
	}
	return ""
}
