package credentials

import (
	"fmt"
	"net/url"
	"strings"
)

// Location is a table location split into scheme, bucket and key prefix.
type Location struct {
	Scheme string // s3 or gs
	Bucket string
	Prefix string // no leading or trailing slash; may be empty (bucket root)
}

// ParseLocation splits s3://bucket/path or gs://bucket/path. It fails for
// other schemes, a missing bucket, or a non-lowercase scheme.
func ParseLocation(loc string) (Location, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return Location{}, fmt.Errorf("invalid location %q: %w", loc, err)
	}
	if !strings.HasPrefix(loc, u.Scheme+"://") || (u.Scheme != "s3" && u.Scheme != "gs") {
		return Location{}, fmt.Errorf("location %q: want s3://bucket/... or gs://bucket/... (lowercase scheme)", loc)
	}
	if u.Host == "" {
		return Location{}, fmt.Errorf("location %q has no bucket", loc)
	}
	return Location{Scheme: u.Scheme, Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}, nil
}

// dir is the key prefix with a trailing slash, so that a table never
// covers a sibling whose name merely starts the same (ns/table vs ns/table2).
func (l Location) dir() string {
	if l.Prefix == "" {
		return ""
	}
	return l.Prefix + "/"
}
