package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store/sqlstore"
)

func cmdMigrate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storageFlags
	sf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if sf.embedded() {
		if err := os.MkdirAll(sf.dataDir, 0o755); err != nil {
			return err
		}
		st, err := sqlstore.OpenSQLite(context.Background(), sf.sqlitePath())
		if err != nil {
			return err
		}
		st.Close()
		fmt.Fprintln(stdout, "migrated", sf.sqlitePath())
		return nil
	}
	if err := sqlstore.MigratePostgres(sf.databaseURL); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "migrated postgres")
	return nil
}

func cmdWarehouse(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: catalog warehouse create NAME --location URI | set-profile NAME --profile FILE | list")
	}
	sub, rest := args[0], args[1:]
	fs := flag.NewFlagSet("warehouse "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storageFlags
	sf.register(fs)
	location := fs.String("location", "", "storage location: file:///path, s3://bucket/prefix or gs://bucket/prefix")
	profileFile := fs.String("profile", "", "set-profile: JSON storage profile file (see docs/credentials.md)")
	secretKey := fs.String("secret-key", os.Getenv("CATALOG_SECRET_KEY"), "set-profile: base64 32-byte key sealing secrets [CATALOG_SECRET_KEY]")
	var name string
	if (sub == "create" || sub == "set-profile") && len(rest) > 0 && rest[0] != "" && rest[0][0] != '-' {
		name, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	ctx := context.Background()
	st, err := openStore(ctx, sf, true)
	if err != nil {
		return err
	}
	defer st.Close()
	sealer, err := loadSealer(*secretKey, sf)
	if err != nil {
		return err
	}
	svc := service.New(st, storage.NewProvider(), service.Options{Sealer: sealer})
	switch sub {
	case "create":
		if name == "" || *location == "" {
			return errors.New("usage: catalog warehouse create NAME --location URI")
		}
		w, err := svc.CreateWarehouse(ctx, name, *location, nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created warehouse %s at %s\n", w.Name, w.Location)
	case "set-profile":
		if name == "" || *profileFile == "" {
			return errors.New("usage: catalog warehouse set-profile NAME --profile FILE")
		}
		raw, err := os.ReadFile(*profileFile)
		if err != nil {
			return err
		}
		if _, err := svc.SetStorageProfile(ctx, name, raw); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "storage profile of %s set\n", name)
	case "list":
		ws, err := svc.ListWarehouses(ctx)
		if err != nil {
			return err
		}
		for _, w := range ws {
			fmt.Fprintf(stdout, "%s\t%s\n", w.Name, w.Location)
		}
	default:
		return fmt.Errorf("unknown warehouse command %q", sub)
	}
	return nil
}
