package credentials

import (
	"context"
	"time"
)

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

// SignedRequest is a signed S3 request: the URI and every header the
// engine must send, whether it may reuse the signature for a while (reads
// only), and what the request does (for the audit trail).
type SignedRequest struct {
	URI       string
	Headers   map[string][]string
	Cacheable bool
	Op        S3Op
}

// Signer signs S3 requests for engines that hold no storage credentials
// (remote signing). The catalog's signer lives in credentials/vending.
type Signer interface {
	// Signing describes the warehouse's S3 signing: the FileIO properties
	// that make engines sign through endpoint (the table's sign route), or
	// nil when the warehouse has no S3 profile; whether the profile enables
	// signing itself (a table may still opt in); and whether it can vend
	// (it names a role to assume).
	Signing(wh WarehouseInfo, endpoint string) (cfg map[string]string, enabled, canVend bool)
	// Sign signs r for the table at tableLocation at the caller's level.
	// It fails with a *SignRefusal for a request outside the table, beyond
	// level, or on storage without signing; with another error when the
	// warehouse's secret cannot be used.
	Sign(ctx context.Context, wh WarehouseInfo, tableLocation string, tablePrefers bool, level AccessLevel, r S3SignRequest, now time.Time) (SignedRequest, error)
}
