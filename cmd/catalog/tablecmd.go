package main

import (
	"context"
	"flag"
	"os"
	"strings"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
)

// tableCmd is what the table commands (maintain, compact) share: the
// storage flags, --warehouse, --secret-key, and the table named by their
// argument as NAMESPACE.TABLE. They run against the database directly as
// the local operator, who holds every privilege.
type tableCmd struct {
	sf        storageFlags
	warehouse *string
	secretKey *string
}

func newTableCmd(fs *flag.FlagSet) *tableCmd {
	c := &tableCmd{}
	c.sf.register(fs)
	c.warehouse = fs.String("warehouse", "default", "the table's warehouse")
	c.secretKey = fs.String("secret-key", os.Getenv("CATALOG_SECRET_KEY"), "base64 32-byte key sealing storage-profile secrets (embedded default: <data-dir>/secret.key) [CATALOG_SECRET_KEY]")
	return c
}

// tableIdent reads NAMESPACE.TABLE (the namespace may have several
// levels: a.b.table); a usage error when it is not one.
func tableIdent(e *cmdEnv, name string) (service.Ident, error) {
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 || dot == len(name)-1 {
		return service.Ident{}, e.usagef("%q: want NAMESPACE.TABLE", name)
	}
	return service.Ident{Namespace: strings.Split(name[:dot], "."), Name: name[dot+1:]}, nil
}

// open migrates and opens the database and returns a service acting as the
// local operator, and the function that closes it.
func (c *tableCmd) open() (context.Context, *service.Service, func(), error) {
	ctx := identity.With(context.Background(), identity.Principal{Source: identity.SourceLocal, Subject: "cli"})
	st, err := openStore(ctx, c.sf, true)
	if err != nil {
		return nil, nil, nil, err
	}
	sealer, err := loadSealer(*c.secretKey, c.sf)
	if err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	return ctx, service.New(st, storage.NewProvider(), service.Options{Sealer: sealer}), st.Close, nil
}
