// Package tablefiles walks the files a table's snapshots reference: each
// snapshot's manifest list (format 4: its root manifest), the manifests it
// lists (format 4: leaf manifests) and the data, delete, column and
// deletion-vector files those name. Snapshot expiry, orphan-file removal
// and purge decide what they delete from this one walk; which references
// each keeps, and what it does with a manifest it cannot read, is theirs.
// It reads storage only through the functions it is given and knows
// nothing of the catalog database or of HTTP.
package tablefiles

import (
	"context"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/v4manifest"
)

// Level is how deep in a snapshot's tree a reference sits.
type Level int

// Levels of references, outermost first.
const (
	// ManifestList is a manifest list, or a v4 root manifest.
	ManifestList Level = iota
	// Manifest is a v1–v3 manifest or a v4 leaf manifest.
	Manifest
	// Content is a data, delete, column or deletion-vector file.
	Content
)

// Ref is one file a snapshot references. What names the kind of file for
// messages and logs ("manifest list", "leaf manifest", "column file", ...).
type Ref struct {
	Location string
	What     string
	Level    Level
}

// Walker walks snapshots, telling Visit of every reference once per
// manifest: a manifest shared by several snapshots is read once.
type Walker struct {
	// Visit is told of each reference. For a manifest list or manifest,
	// true means read it and go on below; for a content file the answer
	// is ignored. An error stops the walk and is returned.
	Visit func(Ref) (bool, error)
	// Unreadable is told of a manifest list or manifest that could not be
	// opened or decoded: nil skips it (the files it lists stay unknown),
	// an error stops the walk and is returned.
	Unreadable func(what, loc string, err error) error
	// IcebergIO opens a v1–v3 manifest list or manifest.
	IcebergIO func(ctx context.Context, loc string) (icebergio.IO, error)
	// ReadV4 reads a v4 root manifest (inherit nil) or a leaf manifest
	// (inherit is the root row that references it).
	ReadV4 func(ctx context.Context, loc string, inherit *v4manifest.TrackedFile) ([]v4manifest.TrackedFile, error)
	// LegacyList reports whether a format-4 table's manifest list is an
	// Avro one, written before the table's upgrade to v4.
	LegacyList func(loc string) bool
	// AllRows takes the deleted and replaced rows of manifests too (a
	// purge deletes every file a manifest names); without it only live
	// rows count, as for what a snapshot still references.
	AllRows bool

	seen map[string]bool
}

// Snapshot walks snap, a snapshot of a table of format version version.
// It returns the first error of Visit or Unreadable.
func (w *Walker) Snapshot(ctx context.Context, snap table.Snapshot, version int) error {
	ok, err := w.Visit(Ref{Location: snap.ManifestList, What: "manifest list", Level: ManifestList})
	if !ok || err != nil {
		return err
	}
	if version >= 4 && (w.LegacyList == nil || !w.LegacyList(snap.ManifestList)) {
		return w.v4Root(ctx, snap.ManifestList)
	}
	return w.manifests(ctx, snap)
}

// enter reports whether manifest loc is to be read: not seen before, and
// Visit says so. It marks loc seen.
func (w *Walker) enter(loc, what string) (bool, error) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[loc] {
		return false, nil
	}
	ok, err := w.Visit(Ref{Location: loc, What: what, Level: Manifest})
	if ok && err == nil {
		w.seen[loc] = true
	}
	return ok, err
}

// manifests walks a v1–v3 snapshot's manifest list.
func (w *Walker) manifests(ctx context.Context, snap table.Snapshot) error {
	fio, err := w.IcebergIO(ctx, snap.ManifestList)
	var list []iceberg.ManifestFile
	if err == nil {
		list, err = snap.Manifests(fio)
	}
	if err != nil {
		return w.Unreadable("manifest list", snap.ManifestList, err)
	}
	for _, m := range list {
		ok, err := w.enter(m.FilePath(), "manifest")
		if err != nil {
			return err
		}
		if ok {
			if err := w.entries(ctx, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// entries walks the files one v1–v3 manifest lists.
func (w *Walker) entries(ctx context.Context, m iceberg.ManifestFile) error {
	fio, err := w.IcebergIO(ctx, m.FilePath())
	if err != nil {
		return w.Unreadable("manifest", m.FilePath(), err)
	}
	for e, err := range m.Entries(fio, !w.AllRows) {
		if err != nil {
			return w.Unreadable("manifest", m.FilePath(), err)
		}
		if _, err := w.Visit(Ref{Location: e.DataFile().FilePath(), What: "data or delete file", Level: Content}); err != nil {
			return err
		}
	}
	return nil
}

// v4Root walks a v4 root manifest: its leaves, and the file rows in them
// or in the root itself.
func (w *Walker) v4Root(ctx context.Context, root string) error {
	rows, err := w.ReadV4(ctx, root, nil)
	if err != nil {
		return w.Unreadable("root manifest", root, err)
	}
	for i := range rows {
		r := &rows[i]
		if !w.AllRows && !r.Tracking.Status.Live() {
			continue
		}
		if r.ContentType != v4manifest.ContentDataManifest && r.ContentType != v4manifest.ContentDeleteManifest {
			if err := w.v4Row(r); err != nil {
				return err
			}
			continue
		}
		ok, err := w.enter(r.Location, "leaf manifest")
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		leaf, err := w.ReadV4(ctx, r.Location, r)
		if err != nil {
			if err := w.Unreadable("leaf manifest", r.Location, err); err != nil {
				return err
			}
			continue
		}
		for j := range leaf {
			if w.AllRows || leaf[j].Tracking.Status.Live() {
				if err := w.v4Row(&leaf[j]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// v4Row visits a v4 file row: the file, its deletion vector and its
// column files.
func (w *Walker) v4Row(r *v4manifest.TrackedFile) error {
	refs := []Ref{{Location: r.Location, What: "data or delete file", Level: Content}}
	if r.DeletionVector != nil {
		refs = append(refs, Ref{Location: r.DeletionVector.Location, What: "deletion vector", Level: Content})
	}
	for _, cf := range r.ColumnFiles {
		refs = append(refs, Ref{Location: cf.Location, What: "column file", Level: Content})
	}
	for _, ref := range refs {
		if _, err := w.Visit(ref); err != nil {
			return err
		}
	}
	return nil
}
