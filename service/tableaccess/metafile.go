package tableaccess

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/store"
)

var metadataVersion = regexp.MustCompile(`^(\d+)-[^/]*\.metadata\.json$`)

// NewMetadataLocation names the next metadata file:
// <location>/metadata/<NNNNN>-<uuid>.metadata.json (or under
// write.metadata.path), numbered one past the previous file (0 for a new
// table). It does not judge the location: FileIO refuses a write outside
// the warehouse, and WriteNextMetadata checks write.metadata.path first.
func NewMetadataLocation(loc string, props map[string]string, previous string) string {
	version := 0
	if previous != "" {
		if m := metadataVersion.FindStringSubmatch(path.Base(previous)); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				version = n + 1
			}
		}
	}
	dir := strings.TrimRight(loc, "/") + "/metadata"
	if p := props[locations.MetadataPathKey]; p != "" {
		dir = strings.TrimRight(p, "/")
	}
	return fmt.Sprintf("%s/%05d-%s.metadata.json", dir, version, uuid.New())
}

// WriteNextMetadata names and writes the metadata file that follows obj's
// current one, for a table or view whose new location and properties are
// given. It returns the new file's location and, when the object moved, its
// normalized new location ("" otherwise). 400 when the location is outside
// the warehouse or a write.*.path property outside the object's prefixes
// (location policy); a write failure is fault.Unavailable when the store
// could not do it now, else fault.CommitFailed: nothing points at the new
// file yet, so nothing was committed.
func (a *Access) WriteNextMetadata(ctx context.Context, w *store.Warehouse, obj *store.Object, loc string, props map[string]string, data []byte) (metaLoc, newLoc string, err error) {
	canon, err := locations.CheckObjectLocation(w, loc)
	if err != nil {
		return "", "", err
	}
	if canon != obj.Location {
		newLoc = canon
	}
	if err := locations.CheckWritePaths(w, canon, props); err != nil {
		return "", "", err
	}
	metaLoc = NewMetadataLocation(loc, props, obj.MetadataLocation)
	if err := a.WriteFile(ctx, w, metaLoc, data); err != nil {
		switch fault.KindOf(err) {
		case fault.BadRequest:
			return "", "", err
		case fault.Unavailable:
			return "", "", fault.Wrap(fault.Unavailable, err, MsgStorageUnavailable, locations.FileName(w, canon, metaLoc))
		}
		return "", "", fault.Wrap(fault.CommitFailed, err, "Commit failed: cannot write metadata file %s, nothing was committed", locations.FileName(w, canon, metaLoc))
	}
	return metaLoc, newLoc, nil
}
