package catalogimport

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/lakehold/catalog/internal/storagepath"
)

// DefaultDialects are the SQL dialects a view may carry to be imported
// unless Options.Dialects says otherwise: the engines that read Iceberg
// views today.
var DefaultDialects = []string{"spark", "trino", "presto", "hive", "flink", "impala", "athena", "dremio",
	"snowflake", "duckdb", "bigquery", "redshift", "starrocks", "doris", "databricks"}

// checkDialects refuses a view whose current version has a representation
// that is not SQL, or SQL in a dialect not in known (lowercase names): an
// engine reading it would not know what to run. It returns the reason, or
// "" when the view may be imported.
func checkDialects(metadata json.RawMessage, known map[string]bool) string {
	var m struct {
		Current  int64 `json:"current-version-id"`
		Versions []struct {
			ID              int64 `json:"version-id"`
			Representations []struct {
				Type    string `json:"type"`
				Dialect string `json:"dialect"`
			} `json:"representations"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(metadata, &m); err != nil {
		return "the source's view metadata does not parse"
	}
	for _, v := range m.Versions {
		if v.ID != m.Current {
			continue
		}
		for _, r := range v.Representations {
			if r.Type != "sql" {
				return fmt.Sprintf("a representation of type %q, not sql", r.Type)
			}
			if !known[strings.ToLower(r.Dialect)] {
				return fmt.Sprintf("unknown SQL dialect %q (known: %s)", r.Dialect, strings.Join(sortedKeys(known), ", "))
			}
		}
		return ""
	}
	return "the view has no current version"
}

// objectLocation is the location an object's metadata names, normalized
// when it can be (else as it is).
func objectLocation(metadata json.RawMessage) string {
	var m struct {
		Location string `json:"location"`
	}
	if json.Unmarshal(metadata, &m) != nil {
		return ""
	}
	return canonical(m.Location)
}

// canonical is loc in the catalog's canonical form (file:/a and file:///a
// are one location), or loc itself when it does not normalize.
func canonical(loc string) string {
	if n, err := storagepath.Normalize(loc); err == nil {
		return n
	}
	return loc
}

// overlaps finds the objects whose locations equal or contain another's:
// the target would take only the first registered, so the import refuses
// all of them by name rather than pick one. It returns a reason per
// object index.
func overlaps(objs []*pending) map[int]string {
	out := map[int]string{}
	for i := range objs {
		for j := i + 1; j < len(objs); j++ {
			a, b := objs[i].location, objs[j].location
			if a == "" || b == "" || !storagepath.Overlap(a, b) {
				continue
			}
			out[i] = addOverlap(out[i], objs[j].item.FullName())
			out[j] = addOverlap(out[j], objs[i].item.FullName())
		}
	}
	return out
}

func addOverlap(reason, other string) string {
	if reason == "" {
		return "its location overlaps that of " + other + " in the source (one location, one name)"
	}
	return strings.Replace(reason, " in the source", ", "+other+" in the source", 1)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// prefixer is a target that can say where its warehouse keeps objects
// (RESTTarget does); a dry run uses it to foresee the target's location
// refusals, which a real run leaves to the target.
type prefixer interface {
	Prefixes(ctx context.Context) ([]string, error)
}

// precheckLocations refuses, for a dry run, the objects whose metadata
// location lies outside the target warehouse's prefixes. It returns a
// note saying whether locations were checked.
func precheckLocations(ctx context.Context, dst Target, objs []*pending) string {
	p, ok := dst.(prefixer)
	if !ok {
		return "locations not checked: the target cannot list its warehouse's prefixes"
	}
	prefixes, err := p.Prefixes(ctx)
	if err != nil {
		return "locations not checked: the target did not show its warehouse (" + err.Error() + ")"
	}
	for _, o := range objs {
		if o.item.Status != "" || insideAny(prefixes, canonical(o.item.MetadataLocation)) {
			continue
		}
		o.refuse("its metadata location is outside the target warehouse's location and allowed-locations (" +
			strings.Join(prefixes, ", ") + "): the target would refuse it")
	}
	return "metadata locations checked against the target warehouse's location and allowed-locations; " +
		"the target's other checks (overlaps with its objects, the files the metadata names) run only in a real import"
}

func insideAny(prefixes []string, loc string) bool {
	for _, p := range prefixes {
		if storagepath.Within(p, loc) {
			return true
		}
	}
	return false
}
