package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// setupPrincipal returns the setup of `catalog principal sub`: built-in
// service principals, managed against the database directly; the operator
// running it holds every privilege (SourceLocal). The client secret is
// printed once, by create and rotate.
func setupPrincipal(sub string) func(*flag.FlagSet, *cmdEnv) func([]string) error {
	return func(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
		var sf storageFlags
		sf.register(fs)
		return func(args []string) error {
			ctx := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "cli"})
			st, err := openStore(ctx, sf, true)
			if err != nil {
				return err
			}
			defer st.Close()
			svc := service.New(st, storage.NewProvider(), service.Options{})
			switch sub {
			case "create", "rotate":
				op := svc.Admin().CreatePrincipal
				if sub == "rotate" {
					op = svc.Admin().RotatePrincipalSecret
				}
				c, err := op(ctx, args[0])
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "principal:     %s\nclient id:     %s\nclient secret: %s\n", c.Name, c.ClientID, c.ClientSecret)
				fmt.Fprintln(e.stdout, "The secret is shown only now; clients use credential=<client id>:<client secret>.")
			case "list":
				return listPrincipals(ctx, svc, e.stdout)
			case "delete":
				if err := svc.Admin().DeletePrincipal(ctx, args[0]); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "deleted principal %s\n", args[0])
			}
			return nil
		}
	}
}

func listPrincipals(ctx context.Context, svc *service.Service, stdout io.Writer) error {
	page := store.Page{Size: 500}
	for {
		ps, next, err := svc.Admin().ListPrincipals(ctx, page)
		if err != nil {
			return err
		}
		for _, p := range ps {
			fmt.Fprintf(stdout, "%s\t%s\tgeneration %d\trotated %s\n", p.Name, p.ClientID, p.SecretGeneration, p.RotatedAt.UTC().Format("2006-01-02T15:04:05Z"))
		}
		if next == "" {
			return nil
		}
		page.Token = next
	}
}
