// Command catalog runs the Lakehold Iceberg REST catalog and its admin
// tasks. Run `catalog help` for usage; the commands are the table in
// commands.go.
package main

import (
	"context"
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

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch code := exitCode(err); code {
	case 0:
	case 2:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(code)
	default:
		fmt.Fprintln(os.Stderr, "catalog:", err)
		os.Exit(code)
	}
}

// run runs the command args name (the command table, commands.go). Help
// goes to stdout; a usage error (exit status 2) and any other failure
// (1) come back as the error.
func run(args []string, stdout, stderr io.Writer) error {
	return dispatch(rootCommand, args, stdout, stderr)
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

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
