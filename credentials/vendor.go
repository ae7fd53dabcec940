package credentials

import "context"

// AccessLevel is what a principal may do with a table's files.
type AccessLevel string

// Access levels for vended storage credentials.
const (
	AccessRead      AccessLevel = "read"
	AccessReadWrite AccessLevel = "read-write"
)

// StorageCredential is one credential scoped to a location prefix.
type StorageCredential struct {
	Prefix string
	Config map[string]string
}

// WarehouseInfo is what a Vendor needs to know of a warehouse.
type WarehouseInfo struct {
	Name       string
	Location   string
	Properties map[string]string
	// StorageProfile is the warehouse's storage profile JSON (secrets sealed).
	StorageProfile string
}

// Vendor hands out storage credentials scoped to one table. The catalog's
// vendors (STS for S3, Google STS for GCS) live in credentials/vending.
type Vendor interface {
	// Vend returns FileIO properties for LoadTableResult.config and scoped
	// credentials for storage-credentials. It fails when the storage
	// profile cannot mint credentials (e.g. STS refused).
	Vend(ctx context.Context, warehouse WarehouseInfo, tableLocation string, level AccessLevel) (map[string]string, []StorageCredential, error)
}
