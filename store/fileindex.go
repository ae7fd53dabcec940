package store

import "context"

// IndexedLeaf is one v4 data leaf manifest to index: its absolute location,
// its lineage, and the files first indexed under that lineage by this
// leaf: all of its data files and their column files (absolute, each
// once) when it starts the lineage, none when it continues its parent's.
type IndexedLeaf struct {
	Leaf      string
	Lineage   string
	Locations []string
}

// IndexEntry says that data or column file Location is in the leaves of
// lineage Lineage (some of them; a later version may have dropped it).
type IndexEntry struct {
	Location string
	Lineage  string
}

// FileIndex is the base-file index of v4 tables: for each table, the
// lineage of each indexed data leaf and the lineages each data file and
// column file is in. Leaves are immutable, so a leaf's entry never changes and is right
// for every snapshot whose root lists the leaf; entries of leaves no root
// lists are merely unused. A leaf is indexed with the pointer swap of the
// commit that wrote it (Swap.Index) or later by FileIndexAdd, its file
// entries in the same transaction. Entries go when their table is dropped
// or replaced.
type FileIndex interface {
	// FileIndexLeaves returns the lineage of each of leaves that is indexed
	// for table tableID with its column files (absent: not indexed, or
	// indexed by a version before migration 22, whose lineage may lack
	// column files). It returns only database errors.
	FileIndexLeaves(ctx context.Context, tableID string, leaves []string) (map[string]string, error)
	// FileIndexLookup returns every entry of table tableID naming one of
	// locations, in no particular order. It returns only database errors.
	FileIndexLookup(ctx context.Context, tableID string, locations []string) ([]IndexEntry, error)
	// FileIndexAdd indexes leaves of table tableID in one transaction;
	// leaves already indexed are left as they are (with their lineage), so
	// concurrent calls for the same leaf are harmless, except that a leaf
	// indexed by a version before migration 22 takes the new lineage. It returns only
	// database errors (ErrInvalidValue for a location the database cannot
	// store).
	FileIndexAdd(ctx context.Context, tableID string, leaves []IndexedLeaf) error
	// FileIndexForgetLeaves drops the entries of leaves of table tableID
	// that no snapshot references any more (deleted by snapshot expiry),
	// and the file entries of lineages left without a leaf. Names that are
	// not indexed leaves are ignored. It returns only database errors.
	FileIndexForgetLeaves(ctx context.Context, tableID string, leaves []string) error
}
