package tablecommit

import (
	"context"
	"encoding/json"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
)

// Committed is a table as a commit left it: its row, its metadata and
// the location of its metadata file.
type Committed struct {
	Object           *store.Object
	Meta             table.Metadata
	MetadataLocation string
}

// CommitExpiry commits remove-snapshots for expire on table id through
// the commit engine, for package maintenance's snapshot expiry, requiring
// every ref to be where meta (the table when the files to delete were
// chosen) has it: a ref moved meanwhile (a rollback to an expiring
// snapshot) is a 409 and nothing is expired. It authorizes nothing (the
// expiry has). Other errors are Commit's.
func (tc *Committer) CommitExpiry(ctx context.Context, w *store.Warehouse, id ident.Ident, meta table.Metadata, expire []int64) (*Committed, error) {
	var reqs []map[string]any
	reqs = append(reqs, map[string]any{"type": "assert-table-uuid", "uuid": meta.TableUUID().String()})
	for name, ref := range meta.Refs() {
		reqs = append(reqs, map[string]any{"type": "assert-ref-snapshot-id", "ref": name, "snapshot-id": ref.SnapshotID})
	}
	rawReqs, err := json.Marshal(reqs)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode requirements")
	}
	rawUps, err := json.Marshal([]map[string]any{{"action": "remove-snapshots", "snapshot-ids": expire}})
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "encode updates")
	}
	c, err := Parse(TableChange{Ident: id, Requirements: rawReqs, Updates: rawUps})
	if err != nil {
		return nil, err
	}
	res, err := tc.commit(ctx, w, []*Change{c})
	if err != nil {
		return nil, err
	}
	return &Committed{Object: res[0].obj, Meta: res[0].meta, MetadataLocation: res[0].metaLoc}, nil
}
