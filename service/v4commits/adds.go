package v4commits

import (
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/internal/v4tree"
	"github.com/lakehold/catalog/v4manifest"
)

// addedFiles lists, normalized, every file the rows res writes name (the
// file rows of its root and of its new leaves, with their deletion vectors
// and column files): a superset of what the commit adds (a rewritten leaf
// names the files it carries too), which store.Swap.Adds allows, since
// the table's files are never orphan-file candidates that a removal
// deletes. The leaves and root the commit writes have fresh names and are
// left out.
func addedFiles(tableLocation string, res *v4tree.Result) []string {
	seen := map[string]bool{}
	var out []string
	add := func(loc string) {
		key, err := storagepath.Normalize(v4manifest.Resolve(tableLocation, loc))
		if err == nil && !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	row := func(r *v4manifest.TrackedFile) {
		add(r.Location)
		if r.DeletionVector != nil {
			add(r.DeletionVector.Location)
		}
		for _, cf := range r.ColumnFiles {
			add(cf.Location)
		}
	}
	for i := range res.Root {
		r := &res.Root[i]
		if r.ContentType != v4manifest.ContentDataManifest && r.ContentType != v4manifest.ContentDeleteManifest {
			row(r)
		}
	}
	for _, l := range res.Leaves {
		for i := range l.Rows {
			row(&l.Rows[i])
		}
	}
	return out
}
