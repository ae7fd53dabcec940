package service

import (
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

// TablePropertyRemoteSigning opts one table into remote signing
// (storageaccess.TablePropertyRemoteSigning).
const TablePropertyRemoteSigning = storageaccess.TablePropertyRemoteSigning

// ActionSignRequest is the action of an audit event recording a remote
// signing request (storageaccess.ActionSignRequest).
const ActionSignRequest = storageaccess.ActionSignRequest

// Storage decides the storage access a caller gets for a table: signing,
// vended credentials, native-write eligibility (storageaccess.Broker,
// whose methods say what they return when).
func (s *Service) Storage() *storageaccess.Broker { return s.broker }
