package store

import (
	"context"
	"time"
)

// DeletedObject is a table or view dropped from a warehouse whose deletion
// profile is soft: kept, out of lists and loads, until ExpiresAt.
type DeletedObject struct {
	ID               string // the object's id, kept from its live row
	Warehouse        string
	Namespace        []string
	Name             string
	Kind             ObjectKind
	Location         string
	MetadataLocation string
	Metadata         []byte // only from DeletedGet and DeletedRemove
	FormatVersion    int
	DeletedAt        time.Time
	ExpiresAt        time.Time
	// Purge records that the drop asked for the files to go too.
	Purge bool
}

// DeletedObjects keeps soft-deleted tables and views. Errors are
// ErrNotFound for a deleted object that does not exist (any more),
// ErrUnavailable when the database is out of reach, ErrDatabase otherwise.
type DeletedObjects interface {
	// ObjectSoftDelete moves the object ref names, whose id must be id, to
	// the deleted objects in one transaction (jobs of WithJobs included):
	// ErrNotFound when there is no such object or it is another one now.
	ObjectSoftDelete(ctx context.Context, ref ObjectRef, id string, expiresAt time.Time, purge bool) (*DeletedObject, error)
	// DeletedList returns a warehouse's deleted objects, newest first,
	// without their metadata, and the token of the next page.
	// ErrInvalidPageToken for a token not issued here.
	DeletedList(ctx context.Context, warehouse string, page Page) ([]*DeletedObject, string, error)
	// DeletedGet returns one deleted object with its metadata.
	DeletedGet(ctx context.Context, warehouse, id string) (*DeletedObject, error)
	// Undrop moves a deleted object back into its own namespace (never
	// another: its location and the grants on it belong there), under its
	// own name or, only while that one is taken, under name, with its id
	// and metadata: ErrNotFound also once its retention ended (its purge
	// may be running), ErrNoSuchNamespace, ErrOwnNameFree for a new name
	// while its own is free, an *AlreadyExistsError when the name is taken,
	// ErrLocationOverlap when another object now uses its location.
	Undrop(ctx context.Context, warehouse, id, name string) (*Object, error)
	// DeletedRemove forgets a deleted object and returns it with its
	// metadata (for the retention job): ErrNotFound when it was undropped.
	DeletedRemove(ctx context.Context, warehouse, id string) (*DeletedObject, error)
}
