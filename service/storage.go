package service

import (
	"context"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/service/storageaccess"
)

// Which storage access a caller gets for a table (vended credentials,
// remote signing, native-write eligibility) is decided by
// storageaccess.Broker; these names and methods keep the service's API
// whole.

// Delegation is how a client asked to reach a table's files
// (storageaccess.Delegation).
type Delegation = storageaccess.Delegation

// Delegation modes (package storageaccess); a client may name both.
const (
	VendedCredentials = storageaccess.VendedCredentials
	RemoteSigning     = storageaccess.RemoteSigning
	NoDelegation      = storageaccess.NoDelegation
)

// RemoteSigningConfig is a table result's remote-signing-config
// (storageaccess.RemoteSigningConfig).
type RemoteSigningConfig = storageaccess.RemoteSigningConfig

// TablePropertyRemoteSigning opts one table into remote signing
// (storageaccess.TablePropertyRemoteSigning).
const TablePropertyRemoteSigning = storageaccess.TablePropertyRemoteSigning

// ActionSignRequest is the action of an audit event recording a remote
// signing request (storageaccess.ActionSignRequest).
const ActionSignRequest = storageaccess.ActionSignRequest

// SignS3Request signs an S3 request for an engine without storage
// credentials (storageaccess.Broker.SignS3Request, which says what is
// returned when).
func (s *Service) SignS3Request(ctx context.Context, warehouse string, id Ident, r credentials.S3SignRequest) (credentials.SignedRequest, error) {
	return s.broker.SignS3Request(ctx, warehouse, id, r)
}

// LoadCredentials returns the storage credentials of a table
// (storageaccess.Broker.LoadCredentials, which says what is returned when).
func (s *Service) LoadCredentials(ctx context.Context, warehouse string, id Ident) ([]credentials.StorageCredential, error) {
	return s.broker.LoadCredentials(ctx, warehouse, id)
}

// NativeWriteEligibility reports whether a table keeps Comet's native
// Parquet writer eligible (storageaccess.Broker.NativeWriteEligibility,
// which says what is returned when).
func (s *Service) NativeWriteEligibility(ctx context.Context, warehouse string, id Ident) (credentials.Eligibility, error) {
	return s.broker.NativeWriteEligibility(ctx, warehouse, id)
}

// newBroker is the service's storage-access broker: it judges access with
// the service's authorizer, reads tables through readTable and the
// metadata cache, and records its audit events with RecordAudit.
func (s *Service) newBroker() *storageaccess.Broker {
	return storageaccess.New(storageaccess.Deps{
		Tables: s.ta, Credentials: s.opts.Credentials, Signer: s.opts.Signer, Audit: s.RecordAudit,
	})

}
