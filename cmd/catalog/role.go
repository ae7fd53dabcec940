package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
)

// setupRole returns the setup of `catalog role sub`: roles managed
// directly in the database; the operator running it holds every privilege
// (identity.SourceLocal). Only create takes --description, only grant and
// revoke take --on.
func setupRole(sub string) func(*flag.FlagSet, *cmdEnv) func([]string) error {
	return func(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
		var sf storageFlags
		sf.register(fs)
		var desc, on string
		switch sub {
		case "create":
			fs.StringVar(&desc, "description", "", "what the role is for")
		case "grant", "revoke":
			fs.StringVar(&on, "on", "", "the securable: server, warehouse:W, namespace:W/a.b, table:W/a.b/t or view:W/a.b/v (required)")
		}
		return func(pos []string) error {
			if (sub == "grant" || sub == "revoke") && on == "" {
				return e.usagef("--on is required")
			}
			ctx := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "cli"})
			st, err := openStore(ctx, sf, true)
			if err != nil {
				return err
			}
			defer st.Close()
			svc := service.New(st, storage.NewProvider(), service.Options{Authorizer: access.NewRBAC(st)})
			return runRole(ctx, svc, sub, pos, desc, on, e.stdout)
		}
	}
}

func runRole(ctx context.Context, svc *service.Service, sub string, pos []string, desc, on string, stdout io.Writer) error {
	switch sub {
	case "create":
		if _, err := svc.Admin().CreateRole(ctx, pos[0], desc); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created role %s\n", pos[0])
	case "list":
		rs, err := svc.Admin().ListRoles(ctx)
		if err != nil {
			return err
		}
		for _, r := range rs {
			fmt.Fprintf(stdout, "%s\t%s\n", r.Name, r.Description)
		}
	case "show":
		return showRole(ctx, svc, pos[0], stdout)
	case "delete":
		if err := svc.Admin().DeleteRole(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "deleted role %s\n", pos[0])
	case "grant", "revoke":
		res, err := parseSecurable(on)
		if err != nil {
			return err
		}
		g := service.Grant{Privilege: service.Privilege(pos[1]), On: res}
		if sub == "grant" {
			err = svc.Admin().GrantPrivilege(ctx, pos[0], g)
		} else {
			err = svc.Admin().RevokePrivilege(ctx, pos[0], g)
		}
		if err != nil {
			return err
		}
		if sub == "grant" {
			fmt.Fprintf(stdout, "granted %s on %s to role %s\n", pos[1], securableSpec(res), pos[0])
		} else {
			fmt.Fprintf(stdout, "revoked %s on %s from role %s\n", pos[1], securableSpec(res), pos[0])
		}
	case "assign", "unassign":
		a, err := access.ParseAssignee(pos[1])
		if err != nil {
			return err
		}
		if sub == "assign" {
			err = svc.Admin().AssignRole(ctx, pos[0], a)
		} else {
			err = svc.Admin().UnassignRole(ctx, pos[0], a)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%sed role %s: %s\n", sub, pos[0], pos[1])
	}
	return nil
}

func showRole(ctx context.Context, svc *service.Service, role string, stdout io.Writer) error {
	gs, err := svc.Admin().ListGrants(ctx, role)
	if err != nil {
		return err
	}
	as, err := svc.Admin().ListAssignments(ctx, role)
	if err != nil {
		return err
	}
	for _, g := range gs {
		fmt.Fprintf(stdout, "grant\t%s\t%s\n", g.Privilege, securableSpec(g.On))
	}
	for _, a := range as {
		fmt.Fprintf(stdout, "assigned\t%s:%s\n", a.Kind, a.Name)
	}
	return nil
}

// parseSecurable parses --on: server, warehouse:W, namespace:W/a.b,
// table:W/a.b/t or view:W/a.b/v. Namespace levels are split on dots, so a
// level containing a dot cannot be named here (use the management API).
func parseSecurable(s string) (service.Resource, error) {
	bad := fmt.Errorf("--on %q: want server, warehouse:W, namespace:W/a.b, table:W/a.b/t or view:W/a.b/v", s)
	if s == "server" {
		return service.Resource{Kind: service.ResourceServer}, nil
	}
	kind, rest, ok := strings.Cut(s, ":")
	if !ok || rest == "" {
		return service.Resource{}, bad
	}
	parts := strings.Split(rest, "/")
	r := service.Resource{Kind: service.ResourceKind(kind), Warehouse: parts[0]}
	switch {
	case kind == "warehouse" && len(parts) == 1:
	case kind == "namespace" && len(parts) == 2:
		r.Namespace = strings.Split(parts[1], ".")
	case (kind == "table" || kind == "view") && len(parts) == 3:
		r.Namespace, r.Name = strings.Split(parts[1], "."), parts[2]
	default:
		return service.Resource{}, bad
	}
	return r, nil
}

// securableSpec prints a resource in the --on syntax.
func securableSpec(r service.Resource) string {
	if r.Kind == service.ResourceServer {
		return "server"
	}
	s := string(r.Kind) + ":" + r.Warehouse
	if len(r.Namespace) > 0 {
		s += "/" + strings.Join(r.Namespace, ".")
	}
	if r.Name != "" {
		s += "/" + r.Name
	}
	return s
}
