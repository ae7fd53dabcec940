package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/store"
)

// BootstrapRole is the role EnsureBootstrapAdmin creates.
const BootstrapRole = "server-admin"

// EnsureBootstrapAdmin creates role server-admin holding every privilege
// on the server, when missing, and assigns it to a. It is idempotent and
// safe to run from several replicas at once. It is the operator's path (no
// authorization); 400 for an invalid assignee, 503 when the database is
// unavailable.
func (s *Service) EnsureBootstrapAdmin(ctx context.Context, a Assignee) error {
	if err := checkAssignee(a); err != nil {
		return err
	}
	r := &store.Role{Name: BootstrapRole, Description: "every privilege on the server (bootstrap)"}
	if err := s.store.RoleCreate(ctx, r); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		return storeErr(err, "")
	}
	for _, p := range AllPrivileges() {
		if err := s.store.GrantAdd(ctx, BootstrapRole, store.Grant{Privilege: string(p), On: store.Securable{Kind: string(ResourceServer)}}); err != nil {
			return storeErr(err, "")
		}
	}
	if err := s.store.AssignmentAdd(ctx, BootstrapRole, store.Assignee(a)); err != nil {
		return storeErr(err, "")
	}
	return nil
}

// listVisibility decides a listing under container: nil when the caller
// holds priv on it (every child inherits it, so everything is visible), a
// store filter when the caller may see container but lacks priv (the
// listing then shows only what they hold something on), or the
// authorization error.
func (s *Service) listVisibility(ctx context.Context, priv Privilege, container Resource) (*store.Visibility, error) {
	err := s.authorize(ctx, priv, container)
	if err == nil || fault.KindOf(err) != fault.Forbidden {
		return nil, err
	}
	f, ok := s.opts.Authorizer.(ListFilter)
	if !ok {
		return nil, err
	}
	v := f.Visibility(identity.From(ctx))
	if v == nil {
		return nil, fmt.Errorf("authorizer denied %s but filters nothing: %w", priv, err)
	}
	return v, nil
}

// warehouseResource names a warehouse securable.
func warehouseResource(name string) Resource {
	return Resource{Kind: ResourceWarehouse, Warehouse: name}
}
