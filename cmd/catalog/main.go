// Command catalog runs the Lakehold Iceberg REST catalog and its admin
// tasks. Run `catalog help` for usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const usage = `catalog: an Apache Iceberg REST catalog (Postgres or embedded SQLite).

Usage:
  catalog serve [flags]                      run the REST catalog
  catalog migrate [flags]                    apply database migrations and exit
  catalog warehouse create NAME --location URI [flags]
  catalog warehouse set-profile NAME --profile FILE [flags]
                                             S3 credential vending for a warehouse
  catalog warehouse list [flags]
  catalog principal create NAME | list | rotate NAME | delete NAME [flags]
                                             built-in service principals (secret shown once)
  catalog manifest inspect FILE [--table-location URI] [--metadata]
                                             print a v4 manifest as JSON lines
  catalog maintain NAMESPACE.TABLE [--warehouse NAME] [--expire-older-than 72h|TIME]
           [--retain-last N] [--dry-run]    expire snapshots, delete the files only they used
  catalog compact NAMESPACE.TABLE [--warehouse NAME] [--dry-run]
                                             fold v4 column files and deletion vectors back
  catalog read --uri URI [--warehouse W] [--credential ID:SECRET | --token T]
           [--select a,b] [--filter EXPR_JSON] [--snapshot-id N] [--row-lineage]
           [--format csv|jsonl|arrow] NAMESPACE.TABLE
                                             read a table through the REST API (v4 column
                                             files, deletion vectors) to stdout
  catalog role create|list|show|delete|grant|revoke|assign|unassign ...
                                             roles and grants (run 'catalog role' for usage)
  catalog help

Storage flags (serve, migrate, warehouse), each with an environment variable:
  --data-dir DIR         CATALOG_DATA_DIR      embedded mode: SQLite file and the
                                               default warehouse live here (default ./data)
  --database-url URL     CATALOG_DATABASE_URL  use Postgres instead of SQLite

Run 'catalog serve --help' for the server flags.
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "catalog:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("missing command")
	}
	switch args[0] {
	case "serve":
		return cmdServe(args[1:], stderr)
	case "migrate":
		return cmdMigrate(args[1:], stdout, stderr)
	case "warehouse":
		return cmdWarehouse(args[1:], stdout, stderr)
	case "manifest":
		return cmdManifest(args[1:], stdout, stderr)
	case "principal":
		return cmdPrincipal(args[1:], stdout, stderr)
	case "role":
		return cmdRole(args[1:], stdout, stderr)
	case "maintain":
		return cmdMaintain(args[1:], stdout, stderr)
	case "compact":
		return cmdCompact(args[1:], stdout, stderr)
	case "read":
		return cmdRead(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// storageFlags are shared by every command that opens the database.
type storageFlags struct {
	dataDir     string
	databaseURL string
}

func (f *storageFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dataDir, "data-dir", envOr("CATALOG_DATA_DIR", "data"), "embedded mode directory (SQLite file + default warehouse) [CATALOG_DATA_DIR]")
	fs.StringVar(&f.databaseURL, "database-url", os.Getenv("CATALOG_DATABASE_URL"), "Postgres URL; empty = embedded SQLite [CATALOG_DATABASE_URL]")
}

func (f *storageFlags) embedded() bool { return f.databaseURL == "" }

func (f *storageFlags) sqlitePath() string { return filepath.Join(f.dataDir, "catalog.db") }

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envDuration(key string, def time.Duration) time.Duration {
	if v := os.Getenv(key); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

func envBool(key string, def bool) bool {
	switch strings.ToLower(os.Getenv(key)) {
	case "1", "true", "yes":
		return true
	case "0", "false", "no":
		return false
	}
	return def
}

// multiFlag collects a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func newLogger(w io.Writer, level string) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lv}))
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
