package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// setupFunction returns the setup of `catalog function sub`: functions
// (SQL UDFs) managed directly in the database as the local operator, as
// the table commands are. create reads the UDF metadata document from
// --metadata (a file, or - for standard input).
func setupFunction(sub string) func(*flag.FlagSet, *cmdEnv) func([]string) error {
	return func(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
		c := newTableCmd(fs)
		var metaPath string
		if sub == "create" {
			fs.StringVar(&metaPath, "metadata", "", "the UDF metadata JSON file (format/udf-spec.md), - for standard input (required)")
		}
		return func(pos []string) error {
			if sub == "create" && metaPath == "" {
				return e.usagef("--metadata is required")
			}
			var doc []byte
			if sub == "create" {
				var err error
				if doc, err = readMetadataArg(metaPath); err != nil {
					return err
				}
			}
			ctx, svc, closeFn, err := c.open()
			if err != nil {
				return err
			}
			defer closeFn()
			switch sub {
			case "create":
				id, err := tableIdent(e, pos[0])
				if err != nil {
					return err
				}
				res, err := svc.Functions().Create(ctx, *c.warehouse, id.Namespace, id.Name, doc)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "created function %s (%s)\n", pos[0], res.MetadataLocation)
			case "drop":
				id, err := tableIdent(e, pos[0])
				if err != nil {
					return err
				}
				if err := svc.Functions().Drop(ctx, *c.warehouse, id); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "dropped function %s\n", pos[0])
			case "list":
				return listFunctions(ctx, svc, *c.warehouse, strings.Split(pos[0], "."), e.stdout)
			}
			return nil
		}
	}
}

// readMetadataArg reads a file, or standard input for "-".
func readMetadataArg(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

// listFunctions prints every function of a namespace, one per line, as
// NAMESPACE.NAME, following the pages.
func listFunctions(ctx context.Context, svc *service.Service, warehouse string, levels []string, out io.Writer) error {
	page := store.Page{Size: 1000}
	for {
		names, next, err := svc.Tables().List(ctx, warehouse, levels, store.KindFunction, page)
		if err != nil {
			return err
		}
		for _, n := range names {
			fmt.Fprintf(out, "%s.%s\n", strings.Join(levels, "."), n)
		}
		if next == "" {
			return nil
		}
		page.Token = next
	}
}
