package upkeep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service/commitjobs"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/store"
)

// runDeleteMetadataFiles is the handler of
// commitjobs.JobDeleteMetadataFiles: it deletes the job's files that lie
// inside the table's prefixes (one outside is logged and left); a file
// already gone counts as deleted. It returns an error, for the attempt to
// be retried, when the arguments are malformed, the warehouse cannot be
// read or a delete failed; nil when the warehouse is gone.
func (u *Upkeep) runDeleteMetadataFiles(ctx context.Context, j *store.JobInfo) error {
	var a commitjobs.MetadataFilesArgs
	if err := json.Unmarshal(j.Args, &a); err != nil || a.TableLocation == "" {
		return errors.New("delete-metadata-files: malformed job arguments")
	}
	w, err := u.d.Tables.Warehouse(ctx, a.Warehouse)
	if err != nil {
		return SkipGone(commitjobs.JobDeleteMetadataFiles, err)
	}
	allowed := locations.TablePrefixes(w, a.TableLocation)
	failed := 0
	for _, f := range a.Files {
		if !allowed.Contains(f) {
			u.d.Tables.Logger().WarnContext(ctx, "left a file outside the table", "file", locations.FileName(w, a.TableLocation, f))
			continue
		}
		io, err := u.d.Tables.FileIO(ctx, w, f)
		if err == nil {
			err = io.Delete(ctx, f)
		}
		if err != nil && !errors.Is(err, storage.ErrNotExist) {
			failed++
			u.d.Tables.Logger().WarnContext(ctx, "could not delete a dropped metadata file", "file", locations.FileName(w, a.TableLocation, f), "error", storage.PathFree(err))
		}
	}
	if failed > 0 {
		return fmt.Errorf("delete-metadata-files: %d of %d files could not be deleted (see the catalog log)", failed, len(a.Files))
	}
	return nil
}
