package service

import (
	"context"
	"log/slog"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/location"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/v4manifest"
)

// purger collects the files a dropped table references, keeping only those
// inside the table's prefixes (location policy): metadata is client input,
// so a reference elsewhere is logged by name and left alone, and nothing
// outside is even read.
type purger struct {
	s        *Service
	w        *store.Warehouse
	tableLoc string
	allowed  location.Set
	log      *slog.Logger
	files    map[string]bool
	seen     map[string]bool // manifests already read
	outside  int
}

// add records loc for deletion when it lies inside the table's prefixes
// and reports whether it does. what names the reference in the log.
func (p *purger) add(ctx context.Context, loc, what string) bool {
	if loc == "" {
		return false
	}
	if !p.allowed.Contains(loc) {
		p.outside++
		p.log.WarnContext(ctx, "purge: left a referenced file outside the table", "ref", what, "file", fileName(p.w, p.tableLoc, loc))
		return false
	}
	p.files[loc] = true
	return true
}

// purgeTableFiles deletes every file the dropped table's metadata reaches
// and that lies inside the table's prefixes: data and delete files,
// manifests, manifest lists, statistics and metadata files. It never
// removes a directory: another table may live below the same path (a
// renamed table keeps its location). Failures are logged; the drop itself
// already happened.
func (s *Service) purgeTableFiles(ctx context.Context, w *store.Warehouse, obj *store.Object) {
	ctx = context.WithoutCancel(ctx)
	log := s.log.With("table", obj.Ref().String())
	meta, version, err := tablemeta.Parse(obj.Metadata)
	if err != nil {
		log.WarnContext(ctx, "purge: cannot parse metadata", "error", err)
		return
	}
	p := &purger{s: s, w: w, tableLoc: obj.Location, allowed: tablePrefixes(w, obj.Location), log: log,
		files: map[string]bool{}, seen: map[string]bool{}}
	p.add(ctx, obj.MetadataLocation, "current metadata file")
	for e := range meta.PreviousFiles() {
		p.add(ctx, e.MetadataFile, "metadata-log entry")
	}
	for st := range meta.Statistics() {
		p.add(ctx, st.StatisticsPath, "statistics file")
	}
	for st := range meta.PartitionStatistics() {
		p.add(ctx, st.StatisticsPath, "partition statistics file")
	}
	for _, snap := range meta.Snapshots() {
		if !p.add(ctx, snap.ManifestList, "manifest list") {
			continue
		}
		if version == FormatV4 && !legacyManifestList(snap.ManifestList) {
			p.collectV4(ctx, meta.Location(), snap.ManifestList)
		} else {
			p.collectManifests(ctx, snap)
		}
	}
	failed := 0
	for f := range p.files {
		io, err := s.fileIO(ctx, w, f)
		if err == nil {
			err = io.Delete(ctx, f)
		}
		if err != nil {
			failed++
			log.DebugContext(ctx, "purge: delete failed", "file", fileName(w, obj.Location, f), "error", pathFree(err))
		}
	}
	log.InfoContext(ctx, "purged table files", "files", len(p.files), "failed", failed, "left_outside", p.outside)
}

// collectManifests adds the manifests of a v1-v3 snapshot and the files
// they list. The manifest list was checked by the caller.
func (p *purger) collectManifests(ctx context.Context, snap table.Snapshot) {
	props, err := p.s.ioProps(p.w, snap.ManifestList)
	var manifests []iceberg.ManifestFile
	if err == nil {
		var fio icebergio.IO
		if fio, err = p.s.files.IcebergIO(ctx, snap.ManifestList, props); err == nil {
			manifests, err = snap.Manifests(fio)
		}
	}
	if err != nil {
		p.log.WarnContext(ctx, "purge: cannot read manifest list", "snapshot", snap.SnapshotID, "error", pathFree(err))
		return
	}
	for _, m := range manifests {
		if p.seen[m.FilePath()] || !p.add(ctx, m.FilePath(), "manifest") {
			continue
		}
		p.seen[m.FilePath()] = true
		props, err := p.s.ioProps(p.w, m.FilePath())
		var fio icebergio.IO
		if err == nil {
			fio, err = p.s.files.IcebergIO(ctx, m.FilePath(), props)
		}
		if err != nil {
			p.log.WarnContext(ctx, "purge: cannot read manifest", "file", fileName(p.w, p.tableLoc, m.FilePath()), "error", pathFree(err))
			continue
		}
		for e, err := range m.Entries(fio, false) {
			if err != nil {
				p.log.WarnContext(ctx, "purge: cannot read manifest", "file", fileName(p.w, p.tableLoc, m.FilePath()), "error", pathFree(err))
				break
			}
			p.add(ctx, e.DataFile().FilePath(), "data or delete file")
		}
	}
}

// collectV4 adds a v4 root manifest's leaves and every file they reference
// (data, delete, column and deletion-vector files). The root was checked
// by the caller; leaves are checked before they are read.
func (p *purger) collectV4(ctx context.Context, tableLoc, root string) {
	add := func(rows []v4manifest.TrackedFile) {
		for _, r := range rows {
			p.add(ctx, r.Location, "data or delete file")
			if r.DeletionVector != nil {
				p.add(ctx, r.DeletionVector.Location, "deletion vector")
			}
			for _, cf := range r.ColumnFiles {
				p.add(ctx, cf.Location, "column file")
			}
		}
	}
	roots, err := p.s.readManifest(ctx, p.w, root, tableLoc, nil, nil)
	if err != nil {
		p.log.WarnContext(ctx, "purge: cannot read root manifest", "file", fileName(p.w, p.tableLoc, root), "error", pathFree(err))
		return
	}
	for i := range roots {
		r := &roots[i]
		if r.ContentType != v4manifest.ContentDataManifest && r.ContentType != v4manifest.ContentDeleteManifest {
			add([]v4manifest.TrackedFile{*r})
			continue
		}
		if p.seen[r.Location] || !p.add(ctx, r.Location, "leaf manifest") {
			continue
		}
		p.seen[r.Location] = true
		rows, err := p.s.readManifest(ctx, p.w, r.Location, tableLoc, r, nil)
		if err != nil {
			p.log.WarnContext(ctx, "purge: cannot read leaf manifest", "file", fileName(p.w, p.tableLoc, r.Location), "error", pathFree(err))
			continue
		}
		add(rows)
	}
}
