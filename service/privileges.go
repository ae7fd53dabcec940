package service

import (
	"context"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/access"
)

// Effective privileges: what the caller may do on a securable, asked
// before offering an action (the console hides a drop button from a
// reader rather than letting the 403 teach it).

// EffectivePrivileges returns the privileges the caller holds on r,
// directly or through a container, among access.PrivilegesOn(r.Kind), sorted.
// The answer comes from one authorizer decision and says nothing about
// whether r exists; with authentication off it is every privilege. 400
// for an ill-formed resource (see CheckGrant), 503 when the grants cannot
// be read.
func (s *Service) EffectivePrivileges(ctx context.Context, r Resource) ([]Privilege, error) {
	if err := access.CheckResource(r); err != nil {
		return nil, err
	}
	return s.opts.Authorizer.Held(ctx, identity.From(ctx), r, access.PrivilegesOn(r.Kind))
}
