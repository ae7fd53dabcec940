package credentials

import (
	"fmt"
	"strings"

	"golang.org/x/oauth2/google/downscope"
)

// GCSAccessBoundary returns the credential access boundary that limits a
// downscoped token to the objects under a table location: objectViewer for
// reads, objectAdmin for read-write, on the bucket, with a CEL condition
// on the object name and on the list prefix.
func GCSAccessBoundary(loc Location, access Access) ([]downscope.AccessBoundaryRule, error) {
	if strings.ContainsAny(loc.Prefix, "'\\") {
		return nil, fmt.Errorf("location prefix %q cannot be quoted in a CEL condition", loc.Prefix)
	}
	role := "inRole:roles/storage.objectViewer"
	if access == ReadWrite {
		role = "inRole:roles/storage.objectAdmin"
	}
	dir := loc.dir()
	expr := fmt.Sprintf("resource.name.startsWith('projects/_/buckets/%s/objects/%s') || "+
		"api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('%s')", loc.Bucket, dir, dir)
	return []downscope.AccessBoundaryRule{{
		AvailableResource:    "//storage.googleapis.com/projects/_/buckets/" + loc.Bucket,
		AvailablePermissions: []string{role},
		Condition:            &downscope.AvailabilityCondition{Expression: expr},
	}}, nil
}
