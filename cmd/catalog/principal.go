package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
)

const principalUsage = "usage: catalog principal create NAME | list | rotate NAME | delete NAME [storage flags]"

// cmdPrincipal manages built-in service principals against the database
// directly; the operator running it holds every privilege (SourceLocal).
// The client secret is printed once, by create and rotate.
func cmdPrincipal(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(principalUsage)
	}
	sub, rest := args[0], args[1:]
	fs := flag.NewFlagSet("principal "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storageFlags
	sf.register(fs)
	var name string
	if sub != "list" && len(rest) > 0 && rest[0] != "" && rest[0][0] != '-' {
		name, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if sub != "list" && name == "" {
		return errors.New(principalUsage)
	}
	ctx := service.WithPrincipal(context.Background(), service.Principal{Source: service.SourceLocal, Subject: "cli"})
	st, err := openStore(ctx, sf, true)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := service.New(st, storage.NewProvider(), service.Options{})
	switch sub {
	case "create", "rotate":
		op := svc.CreatePrincipal
		if sub == "rotate" {
			op = svc.RotatePrincipalSecret
		}
		c, err := op(ctx, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "principal:     %s\nclient id:     %s\nclient secret: %s\n", c.Name, c.ClientID, c.ClientSecret)
		fmt.Fprintln(stdout, "The secret is shown only now; clients use credential=<client id>:<client secret>.")
	case "list":
		return listPrincipals(ctx, svc, stdout)
	case "delete":
		if err := svc.DeletePrincipal(ctx, name); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "deleted principal %s\n", name)
	default:
		return fmt.Errorf("unknown principal command %q; %s", sub, principalUsage)
	}
	return nil
}

func listPrincipals(ctx context.Context, svc *service.Service, stdout io.Writer) error {
	page := service.Page{Size: 500}
	for {
		ps, next, err := svc.ListPrincipals(ctx, page)
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
