package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store/sqlstore"
)

// setupMigrate applies the migrations: SQLite's on open, Postgres's
// explicitly.
func setupMigrate(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
	var sf storageFlags
	sf.register(fs)
	return func([]string) error {
		if sf.embedded() {
			if err := os.MkdirAll(sf.dataDir, 0o755); err != nil {
				return err
			}
			st, err := sqlstore.OpenSQLite(context.Background(), sf.sqlitePath())
			if err != nil {
				return err
			}
			st.Close()
			fmt.Fprintln(e.stdout, "migrated", sf.sqlitePath())
			return nil
		}
		if err := sqlstore.MigratePostgres(sf.databaseURL); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, "migrated postgres")
		return nil
	}
}

// setupWarehouse returns the setup of `catalog warehouse sub`: each
// subcommand registers only the flags it reads.
func setupWarehouse(sub string) func(*flag.FlagSet, *cmdEnv) func([]string) error {
	return func(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
		var sf storageFlags
		sf.register(fs)
		var location, profileFile, secretKey *string
		switch sub {
		case "create":
			location = fs.String("location", "", "storage location: file:///path, s3://bucket/prefix, gs://bucket/prefix or abfss://filesystem@account.dfs.core.windows.net/prefix (required)")
		case "set-profile":
			profileFile = fs.String("profile", "", "JSON storage profile file (see docs/credentials.md) (required)")
			secretKey = fs.String("secret-key", os.Getenv("CATALOG_SECRET_KEY"), "base64 32-byte key sealing the profile's secrets (embedded default: <data-dir>/secret.key) [CATALOG_SECRET_KEY]")
		}
		return func(args []string) error {
			if location != nil && *location == "" {
				return e.usagef("--location is required")
			}
			if profileFile != nil && *profileFile == "" {
				return e.usagef("--profile is required")
			}
			ctx := context.Background()
			st, err := openStore(ctx, sf, true)
			if err != nil {
				return err
			}
			defer st.Close()
			opts := service.Options{}
			if secretKey != nil {
				if opts.Sealer, err = loadSealer(*secretKey, sf); err != nil {
					return err
				}
			}
			svc := service.New(st, storage.NewProvider(), opts)
			switch sub {
			case "create":
				w, err := svc.CreateWarehouse(ctx, args[0], *location, nil)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "created warehouse %s at %s\n", w.Name, w.Location)
			case "set-profile":
				raw, err := os.ReadFile(*profileFile)
				if err != nil {
					return err
				}
				if _, err := svc.Warehouses().SetStorageProfile(ctx, args[0], raw); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "storage profile of %s set\n", args[0])
			case "list":
				ws, err := svc.ListWarehouses(ctx)
				if err != nil {
					return err
				}
				for _, w := range ws {
					fmt.Fprintf(e.stdout, "%s\t%s\n", w.Name, w.Location)
				}
			}
			return nil
		}
	}
}
