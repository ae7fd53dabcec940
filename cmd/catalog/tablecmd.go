package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
)

// tableCmd is what the table commands (maintain, compact) share: the
// storage flags, --warehouse, --secret-key, and the table named by the
// first argument as NAMESPACE.TABLE. They run against the database
// directly as the local operator, who holds every privilege.
type tableCmd struct {
	fs        *flag.FlagSet
	sf        storageFlags
	warehouse *string
	secretKey *string
	usage     string
}

func newTableCmd(name, usage string, stderr io.Writer) *tableCmd {
	c := &tableCmd{fs: flag.NewFlagSet(name, flag.ContinueOnError), usage: usage}
	c.fs.SetOutput(stderr)
	c.sf.register(c.fs)
	c.warehouse = c.fs.String("warehouse", "default", "the table's warehouse")
	c.secretKey = c.fs.String("secret-key", os.Getenv("CATALOG_SECRET_KEY"), "base64 32-byte key sealing storage-profile secrets [CATALOG_SECRET_KEY]")
	return c
}

// parse reads the table name and the flags: the usage error when the name
// is missing or not NAMESPACE.TABLE.
func (c *tableCmd) parse(args []string) (service.Ident, error) {
	var name string
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if err := c.fs.Parse(args); err != nil {
		return service.Ident{}, err
	}
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 || dot == len(name)-1 {
		return service.Ident{}, errors.New(c.usage)
	}
	return service.Ident{Namespace: strings.Split(name[:dot], "."), Name: name[dot+1:]}, nil
}

// open migrates and opens the database and returns a service acting as the
// local operator, and the function that closes it.
func (c *tableCmd) open() (context.Context, *service.Service, func(), error) {
	ctx := service.WithPrincipal(context.Background(), service.Principal{Source: service.SourceLocal, Subject: "cli"})
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
