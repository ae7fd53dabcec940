package service

import (
	"context"

	"github.com/lakehold/catalog/v4manifest"

	"github.com/lakehold/catalog/store"
)

// purgeTableFiles deletes every file the dropped table's metadata reaches:
// data and delete files, manifests, manifest lists, statistics and metadata
// files. It never removes a directory: another table may live below the same
// path (a renamed table keeps its location). Failures are logged; the drop
// itself already happened.
func (s *Service) purgeTableFiles(ctx context.Context, w *store.Warehouse, obj *store.Object) {
	ctx = context.WithoutCancel(ctx)
	log := s.log.With("table", obj.Ref().String(), "metadata_location", obj.MetadataLocation)
	meta, version, err := parseTableMetadata(obj.Metadata)
	if err != nil {
		log.WarnContext(ctx, "purge: cannot parse metadata", "error", err)
		return
	}
	fio, err := s.files.IcebergIO(ctx, obj.MetadataLocation, w.Properties)
	if err != nil {
		log.WarnContext(ctx, "purge: no file IO", "error", err)
		return
	}
	files := map[string]bool{obj.MetadataLocation: true}
	for e := range meta.PreviousFiles() {
		files[e.MetadataFile] = true
	}
	for st := range meta.Statistics() {
		files[st.StatisticsPath] = true
	}
	for st := range meta.PartitionStatistics() {
		files[st.StatisticsPath] = true
	}
	manifestsSeen := map[string]bool{}
	for _, snap := range meta.Snapshots() {
		if snap.ManifestList == "" {
			continue
		}
		if version == FormatV4 {
			s.collectV4Files(ctx, w, meta.Location(), snap.ManifestList, files, manifestsSeen)
			continue
		}
		files[snap.ManifestList] = true
		manifests, err := snap.Manifests(fio)
		if err != nil {
			log.WarnContext(ctx, "purge: cannot read manifest list", "path", snap.ManifestList, "error", err)
			continue
		}
		for _, m := range manifests {
			if manifestsSeen[m.FilePath()] {
				continue
			}
			manifestsSeen[m.FilePath()] = true
			files[m.FilePath()] = true
			entries, err := m.FetchEntries(fio, false)
			if err != nil {
				log.WarnContext(ctx, "purge: cannot read manifest", "path", m.FilePath(), "error", err)
				continue
			}
			for _, e := range entries {
				files[e.DataFile().FilePath()] = true
			}
		}
	}
	failed := 0
	for f := range files {
		if err := fio.Remove(f); err != nil {
			failed++
			log.DebugContext(ctx, "purge: delete failed", "path", f, "error", err)
		}
	}
	log.InfoContext(ctx, "purged table files", "files", len(files), "failed", failed)
}

// collectV4Files adds a v4 root manifest, its leaves and every file they
// reference (data, delete, column and deletion-vector files) to files.
func (s *Service) collectV4Files(ctx context.Context, w *store.Warehouse, tableLoc, root string, files, seen map[string]bool) {
	files[root] = true
	add := func(rows []v4manifest.TrackedFile) {
		for _, r := range rows {
			files[r.Location] = true
			if r.DeletionVector != nil {
				files[r.DeletionVector.Location] = true
			}
			for _, cf := range r.ColumnFiles {
				files[cf.Location] = true
			}
		}
	}
	roots, err := s.readManifest(ctx, w, root, tableLoc, nil, nil)
	if err != nil {
		s.log.WarnContext(ctx, "purge: cannot read root manifest", "path", root, "error", err)
		return
	}
	for i := range roots {
		r := &roots[i]
		files[r.Location] = true
		if r.ContentType != v4manifest.ContentDataManifest && r.ContentType != v4manifest.ContentDeleteManifest {
			add([]v4manifest.TrackedFile{*r})
			continue
		}
		if seen[r.Location] {
			continue
		}
		seen[r.Location] = true
		rows, err := s.readManifest(ctx, w, r.Location, tableLoc, r, nil)
		if err != nil {
			s.log.WarnContext(ctx, "purge: cannot read leaf manifest", "path", r.Location, "error", err)
			continue
		}
		add(rows)
	}
}
