package service

import (
	"context"
	"slices"

	"github.com/lakehold/catalog/internal/identity"
)

// Effective privileges: what the caller may do on a securable, asked
// before offering an action (the console hides a drop button from a
// reader rather than letting the 403 teach it).

// PrivilegesOn lists the privileges that can be held on a securable of
// kind k: those grantable on k itself. A privilege grantable only on a
// container (table-create on a namespace) is not about the object below.
func PrivilegesOn(k ResourceKind) []Privilege {
	var out []Privilege
	for _, p := range AllPrivileges() {
		if slices.Contains(grantable[p], k) {
			out = append(out, p)
		}
	}
	return out
}

// EffectivePrivileges returns the privileges the caller holds on r,
// directly or through a container, among PrivilegesOn(r.Kind), sorted.
// The answer comes from one authorizer decision and says nothing about
// whether r exists; with authentication off it is every privilege. 400
// for an ill-formed resource (see CheckGrant), 503 when the grants cannot
// be read.
func (s *Service) EffectivePrivileges(ctx context.Context, r Resource) ([]Privilege, error) {
	if err := checkResource(r); err != nil {
		return nil, err
	}
	return s.opts.Authorizer.Held(ctx, identity.From(ctx), r, PrivilegesOn(r.Kind))
}
