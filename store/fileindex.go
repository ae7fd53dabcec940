package store

import "context"

// IndexedLeaf is the index of one v4 leaf manifest: the data file
// location of each of its rows, in row order (a location's position is its
// index; a location may appear twice, as a dead and a live row). Locations
// and Leaf are absolute.
type IndexedLeaf struct {
	Leaf      string
	Locations []string
}

// IndexEntry says that row Position of leaf manifest Leaf names the data
// file Location.
type IndexEntry struct {
	Location string
	Leaf     string
	Position int
}

// FileIndex is the base-file index of v4 tables: for each table, which row
// of which leaf manifest names a data file. Leaves are immutable, so an
// entry never changes: it is right for every snapshot whose root lists the
// leaf, and entries of leaves no root lists are merely unused. A leaf is
// indexed all at once (its entries and its mark in one transaction), either
// with the pointer swap of the commit that wrote it (Swap.Index) or later
// by FileIndexAdd. Entries go when their table is dropped or replaced.
type FileIndex interface {
	// FileIndexLeaves reports which of leaves are indexed for table
	// tableID. It returns only database errors.
	FileIndexLeaves(ctx context.Context, tableID string, leaves []string) (map[string]bool, error)
	// FileIndexLookup returns every entry of table tableID naming one of
	// locations, of any leaf, in no particular order. It returns only
	// database errors.
	FileIndexLookup(ctx context.Context, tableID string, locations []string) ([]IndexEntry, error)
	// FileIndexAdd indexes leaves of table tableID in one transaction;
	// leaves already indexed are left as they are, so concurrent calls for
	// the same leaf are harmless. It returns only database errors
	// (ErrInvalidValue for a location the database cannot store).
	FileIndexAdd(ctx context.Context, tableID string, leaves []IndexedLeaf) error
}
