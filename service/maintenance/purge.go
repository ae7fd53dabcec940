package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/storagepath"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/locations"
	"github.com/lakehold/catalog/service/tablefiles"
	"github.com/lakehold/catalog/store"
)

// purger collects the files a dropped table references, keeping only those
// inside the table's prefixes (location policy): metadata is client input,
// so a reference elsewhere is logged by name and left alone, and nothing
// outside is even read.
type purger struct {
	m        *Maintainer
	w        *store.Warehouse
	tableLoc string
	allowed  storagepath.Set
	log      *slog.Logger
	files    map[string]int // location → purge tier
	outside  int
	// unread counts manifests that could not be read for a reason other
	// than being gone already: the files they list are unknown.
	unread int
	// live is set when the table is live (orphan removal): a missing
	// manifest then counts as unread too, its files being unknown.
	live bool
	// keepData is set for a table with gc.enabled=false: its data, delete,
	// column and deletion-vector files may belong to other tables too, so
	// a purge leaves them (statistics, manifests and metadata still go).
	keepData bool
}

// Purge tiers: a file is deleted only once every file of a lower tier is
// gone, so that an attempt cut short (a crash, a storage error) leaves the
// files that lead to whatever remains, and the next attempt finds it all.
const (
	tierContent      = iota // data, delete, column, deletion-vector and statistics files
	tierManifest            // manifests and v4 leaf manifests
	tierManifestList        // manifest lists and v4 root manifests
	tierPreviousMeta        // metadata-log entries
	tierCurrentMeta         // the metadata file the job reads first
	purgeTiers
)

// purgeTier is the tier of each level of a snapshot's tree.
var purgeTier = map[tablefiles.Level]int{
	tablefiles.ManifestList: tierManifestList,
	tablefiles.Manifest:     tierManifest,
	tablefiles.Content:      tierContent,
}

// add records loc for deletion in tier when it lies inside the table's
// prefixes and reports whether it does. what names the reference in the
// log.
func (p *purger) add(ctx context.Context, loc, what string, tier int) bool {
	if loc == "" {
		return false
	}
	if !p.allowed.Contains(loc) {
		p.outside++
		p.log.WarnContext(ctx, "purge: left a referenced file outside the table", "ref", what, "file", locations.FileName(p.w, p.tableLoc, loc))
		return false
	}
	if p.keepData && tier == tierContent && !strings.Contains(what, "statistics") {
		return true
	}
	if t, ok := p.files[loc]; !ok || tier > t {
		p.files[loc] = tier
	}
	return true
}

// unreadable notes a manifest that could not be read; one already deleted
// (by an earlier attempt of the same purge) is not an error.
func (p *purger) unreadable(ctx context.Context, what, loc string, err error) {
	if errors.Is(err, storage.ErrNotExist) && !p.live {
		return
	}
	p.unread++
	p.log.WarnContext(ctx, "purge: cannot read "+what, "file", locations.FileName(p.w, p.tableLoc, loc), "error", storage.PathFree(err))
}

// errPurgeIncomplete is what a purge attempt that left files returns, so
// that the job runs again.
var errPurgeIncomplete = errors.New("purge incomplete")

// PurgeTableFiles deletes every file the dropped table's metadata reaches
// and that lies inside the table's prefixes: data and delete files,
// manifests, manifest lists, statistics and metadata files, tier by tier.
// It never removes a directory: another table may live below the same path
// (a renamed table keeps its location). It returns an error (naming counts,
// never paths) when files remain, so the job that runs it is retried. A
// strict purge also stops when a manifest cannot be read (a storage
// outage: the next attempt finds the files it lists); otherwise such a
// manifest is skipped, as a corrupt one never becomes readable.
func (m *Maintainer) PurgeTableFiles(ctx context.Context, w *store.Warehouse, obj *store.Object, strict bool) error {
	log := m.d.Tables.Logger().With("table", obj.Ref().String())
	meta, version, err := tablemeta.Parse(obj.Metadata)
	if err != nil {
		// Retrying cannot help: the job ends with this error.
		log.WarnContext(ctx, "purge: cannot parse metadata", "error", err)
		return fmt.Errorf("%w: the table's metadata file does not parse", errPurgeIncomplete)
	}
	p := m.collectFiles(ctx, w, obj, meta, version, log, false, GCDisabled(meta.Properties()))
	if p.unread > 0 && strict {
		// Deleting the rest would lose the way to the files those
		// manifests list; delete only the content found so far.
		deleted, failed := p.deleteTier(ctx, obj, tierContent)
		log.InfoContext(ctx, "purge: manifests unreadable, deleted content only", "files", deleted, "failed", failed, "unread", p.unread)
		return fmt.Errorf("%w: %d manifests could not be read", errPurgeIncomplete, p.unread)
	}
	total := 0
	for tier := range purgeTiers {
		deleted, failed := p.deleteTier(ctx, obj, tier)
		total += deleted
		if failed > 0 {
			log.InfoContext(ctx, "purge: stopped at a failed delete", "files", total, "failed", failed, "tier", tier)
			return fmt.Errorf("%w: %d files could not be deleted", errPurgeIncomplete, failed)
		}
	}
	log.InfoContext(ctx, "purged table files", "files", total, "left_outside", p.outside, "data_kept_gc_disabled", p.keepData)
	return nil
}

// collectTableFiles finds every file obj's metadata reaches inside the
// table's prefixes, each with its purge tier: the metadata files, the
// statistics files, and for every snapshot its manifest list and what it
// lists (purge, and orphan removal for what is live).
func (m *Maintainer) collectTableFiles(ctx context.Context, w *store.Warehouse, obj *store.Object, meta table.Metadata, version int, log *slog.Logger, live bool) *purger {
	return m.collectFiles(ctx, w, obj, meta, version, log, live, false)
}

// collectFiles is collectTableFiles for a purge that may keep the data
// files (keepData: gc.enabled=false).
func (m *Maintainer) collectFiles(ctx context.Context, w *store.Warehouse, obj *store.Object, meta table.Metadata, version int, log *slog.Logger, live, keepData bool) *purger {
	p := &purger{m: m, w: w, tableLoc: obj.Location, allowed: locations.TablePrefixes(w, obj.Location), log: log,
		files: map[string]int{}, live: live, keepData: keepData}
	p.add(ctx, obj.MetadataLocation, "current metadata file", tierCurrentMeta)
	for e := range meta.PreviousFiles() {
		p.add(ctx, e.MetadataFile, "metadata-log entry", tierPreviousMeta)
	}
	for st := range meta.Statistics() {
		p.add(ctx, st.StatisticsPath, "statistics file", tierContent)
	}
	for st := range meta.PartitionStatistics() {
		p.add(ctx, st.StatisticsPath, "partition statistics file", tierContent)
	}
	walk := m.fileWalker(w, meta.Location(), tablefiles.Walker{
		AllRows: true,
		Visit: func(r tablefiles.Ref) (bool, error) {
			return p.add(ctx, r.Location, r.What, purgeTier[r.Level]), nil
		},
		Unreadable: func(what, loc string, err error) error {
			p.unreadable(ctx, what, loc, err)
			return nil
		},
	})
	for _, snap := range meta.Snapshots() {
		_ = walk.Snapshot(ctx, snap, version) // Visit and Unreadable never fail it
	}
	return p
}

// deleteTier deletes the collected files of one tier, a bounded number at
// a time, and counts what was deleted and what failed.
func (p *purger) deleteTier(ctx context.Context, obj *store.Object, tier int) (deleted, failed int) {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(purgeParallelism)
	for f, t := range p.files {
		if t != tier {
			continue
		}
		g.Go(func() error {
			io, err := p.m.d.Tables.FileIO(gctx, p.w, f)
			if err == nil {
				err = io.Delete(gctx, f)
			}
			mu.Lock()
			defer mu.Unlock()
			if errors.Is(err, storage.ErrIsDirectory) {
				// A reference to a directory: never deleted, and no retry
				// will change that.
				p.log.WarnContext(gctx, "purge: left a directory a reference names", "file", locations.FileName(p.w, obj.Location, f))
				err = nil
			}
			if err != nil {
				failed++
				p.log.DebugContext(gctx, "purge: delete failed", "file", locations.FileName(p.w, obj.Location, f), "error", storage.PathFree(err))
			} else {
				deleted++
			}
			return nil
		})
	}
	_ = g.Wait()
	return deleted, failed
}

// purgeParallelism bounds the deletes one purge has in flight.
const purgeParallelism = 16
