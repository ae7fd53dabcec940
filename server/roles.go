package server

import (
	"context"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
)

// Role management: /management/v1/roles. Every route needs manage-grants
// on the server (the service checks it).

func roleJSON(r *service.Role) openapi.Role {
	return openapi.Role{Name: r.Name, Description: r.Description}
}

// grantOf decodes a grant body; the service validates it (400).
func grantOf(g *openapi.Grant) service.Grant {
	if g == nil {
		return service.Grant{}
	}
	r := g.Resource
	res := service.Resource{Kind: service.ResourceKind(r.Kind)}
	if r.Warehouse != nil {
		res.Warehouse = *r.Warehouse
	}
	if r.Namespace != nil {
		res.Namespace = *r.Namespace
	}
	if r.Name != nil {
		res.Name = *r.Name
	}
	return service.Grant{Privilege: service.Privilege(g.Privilege), On: res}
}

func grantJSON(g service.Grant) openapi.Grant {
	r := openapi.Securable{Kind: string(g.On.Kind)}
	if g.On.Warehouse != "" {
		r.Warehouse = &g.On.Warehouse
	}
	if len(g.On.Namespace) > 0 {
		ns := g.On.Namespace
		r.Namespace = &ns
	}
	if g.On.Name != "" {
		r.Name = &g.On.Name
	}
	return openapi.Grant{Privilege: string(g.Privilege), Resource: r}
}

func assigneeOf(a *openapi.Assignee) service.Assignee {
	if a == nil {
		return service.Assignee{}
	}
	return service.Assignee{Kind: a.Kind, Name: a.Name}
}

// ListRoles implements openapi.StrictServerInterface.
func (s *Server) ListRoles(ctx context.Context, _ openapi.ListRolesRequestObject) (openapi.ListRolesResponseObject, error) {
	rs, err := s.rooms.admin.ListRoles(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]openapi.Role, 0, len(rs))
	for _, r := range rs {
		out = append(out, roleJSON(r))
	}
	return openapi.ListRoles200JSONResponse{Roles: out}, nil
}

// CreateRole implements openapi.StrictServerInterface.
func (s *Server) CreateRole(ctx context.Context, req openapi.CreateRoleRequestObject) (openapi.CreateRoleResponseObject, error) {
	desc := ""
	if req.Body.Description != nil {
		desc = *req.Body.Description
	}
	r, err := s.rooms.admin.CreateRole(ctx, req.Body.Name, desc)
	if err != nil {
		return nil, err
	}
	return openapi.CreateRole200JSONResponse(roleJSON(r)), nil
}

// GetRole implements openapi.StrictServerInterface.
func (s *Server) GetRole(ctx context.Context, req openapi.GetRoleRequestObject) (openapi.GetRoleResponseObject, error) {
	r, err := s.rooms.admin.GetRole(ctx, req.Role)
	if err != nil {
		return nil, err
	}
	return openapi.GetRole200JSONResponse(roleJSON(r)), nil
}

// DeleteRole implements openapi.StrictServerInterface.
func (s *Server) DeleteRole(ctx context.Context, req openapi.DeleteRoleRequestObject) (openapi.DeleteRoleResponseObject, error) {
	if err := s.rooms.admin.DeleteRole(ctx, req.Role); err != nil {
		return nil, err
	}
	return openapi.DeleteRole204Response{}, nil
}

// ListGrants implements openapi.StrictServerInterface.
func (s *Server) ListGrants(ctx context.Context, req openapi.ListGrantsRequestObject) (openapi.ListGrantsResponseObject, error) {
	gs, err := s.rooms.admin.ListGrants(ctx, req.Role)
	if err != nil {
		return nil, err
	}
	out := make([]openapi.Grant, 0, len(gs))
	for _, g := range gs {
		out = append(out, grantJSON(g))
	}
	return openapi.ListGrants200JSONResponse{Grants: out}, nil
}

// AddGrant implements openapi.StrictServerInterface.
func (s *Server) AddGrant(ctx context.Context, req openapi.AddGrantRequestObject) (openapi.AddGrantResponseObject, error) {
	if err := s.rooms.admin.GrantPrivilege(ctx, req.Role, grantOf(req.Body)); err != nil {
		return nil, err
	}
	return openapi.AddGrant204Response{}, nil
}

// RevokeGrant implements openapi.StrictServerInterface.
func (s *Server) RevokeGrant(ctx context.Context, req openapi.RevokeGrantRequestObject) (openapi.RevokeGrantResponseObject, error) {
	if err := s.rooms.admin.RevokePrivilege(ctx, req.Role, grantOf(req.Body)); err != nil {
		return nil, err
	}
	return openapi.RevokeGrant204Response{}, nil
}

// ListAssignments implements openapi.StrictServerInterface.
func (s *Server) ListAssignments(ctx context.Context, req openapi.ListAssignmentsRequestObject) (openapi.ListAssignmentsResponseObject, error) {
	as, err := s.rooms.admin.ListAssignments(ctx, req.Role)
	if err != nil {
		return nil, err
	}
	out := make([]openapi.Assignee, 0, len(as))
	for _, a := range as {
		out = append(out, openapi.Assignee{Kind: a.Kind, Name: a.Name})
	}
	return openapi.ListAssignments200JSONResponse{Assignments: out}, nil
}

// AddAssignment implements openapi.StrictServerInterface.
func (s *Server) AddAssignment(ctx context.Context, req openapi.AddAssignmentRequestObject) (openapi.AddAssignmentResponseObject, error) {
	if err := s.rooms.admin.AssignRole(ctx, req.Role, assigneeOf(req.Body)); err != nil {
		return nil, err
	}
	return openapi.AddAssignment204Response{}, nil
}

// DeleteAssignment implements openapi.StrictServerInterface.
func (s *Server) DeleteAssignment(ctx context.Context, req openapi.DeleteAssignmentRequestObject) (openapi.DeleteAssignmentResponseObject, error) {
	if err := s.rooms.admin.UnassignRole(ctx, req.Role, service.Assignee{Kind: req.Kind, Name: req.Name}); err != nil {
		return nil, err
	}
	return openapi.DeleteAssignment204Response{}, nil
}
