package vending

import (
	"context"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/lakehold/catalog/credentials"
)

// ContainerSAS signs a SAS on the profile's whole filesystem at level, the
// way Vend signs a directory SAS. Azurite checks container SAS tokens
// only, so tests use it to check the signing and the permission mapping
// against real storage.
func (v *ADLS) ContainerSAS(ctx context.Context, p *credentials.ADLSProfile, level credentials.AccessLevel) (string, error) {
	m, _, err := v.sign(ctx, p, sas.BlobSignatureValues{
		Protocol:      sasProtocol(p),
		Permissions:   credentials.SASPermissions(level),
		ContainerName: p.Filesystem,
	}, string(level))
	return m.token, err
}
