package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/storage"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
	"github.com/lakehold/catalog/vending"
)

func cmdServe(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storageFlags
	sf.register(fs)
	listen := fs.String("listen", envOr("CATALOG_LISTEN", "127.0.0.1:8181"), "address to serve on [CATALOG_LISTEN]")
	var warehouses multiFlag
	fs.Var(&warehouses, "warehouse", "NAME=URI warehouse to create if missing; repeatable [CATALOG_WAREHOUSES, comma-separated]")
	defaultWH := fs.String("default-warehouse", os.Getenv("CATALOG_DEFAULT_WAREHOUSE"), "warehouse served by /v1/config without ?warehouse= (embedded default: default) [CATALOG_DEFAULT_WAREHOUSE]")
	migrate := fs.Bool("migrate", envBool("CATALOG_MIGRATE", true), "apply Postgres migrations at start [CATALOG_MIGRATE]")
	verify := fs.Bool("verify-metadata-on-load", envBool("CATALOG_VERIFY_METADATA_ON_LOAD", true), "stat the metadata file on every loadTable (404 when it vanished) [CATALOG_VERIFY_METADATA_ON_LOAD]")
	idemLife := fs.Duration("idempotency-lifetime", envDuration("CATALOG_IDEMPOTENCY_LIFETIME", 30*time.Minute), "how long Idempotency-Key outcomes are kept [CATALOG_IDEMPOTENCY_LIFETIME]")
	logLevel := fs.String("log-level", envOr("CATALOG_LOG_LEVEL", "info"), "debug, info, warn or error [CATALOG_LOG_LEVEL]")
	secretKey := fs.String("secret-key", os.Getenv("CATALOG_SECRET_KEY"), "base64 32-byte key sealing storage-profile secrets (embedded default: <data-dir>/secret.key) [CATALOG_SECRET_KEY]")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if v := os.Getenv("CATALOG_WAREHOUSES"); v != "" && len(warehouses) == 0 {
		warehouses = strings.Split(v, ",")
	}
	log := newLogger(stderr, *logLevel)
	ctx, stop := signalContext()
	defer stop()

	st, err := openStore(ctx, sf, *migrate)
	if err != nil {
		return err
	}
	defer st.Close()

	sealer, err := loadSealer(*secretKey, sf)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	svc := service.New(st, storage.NewProvider(), service.Options{
		VerifyMetadataOnLoad: *verify,
		OnCommit:             server.CommitObserver(reg),
		Logger:               log,
		Sealer:               sealer,
		Credentials:          vending.New(sealer),
	})
	if sf.embedded() {
		abs, err := filepath.Abs(filepath.Join(sf.dataDir, "warehouse"))
		if err != nil {
			return err
		}
		warehouses = append([]string{"default=file://" + abs}, warehouses...)
		if *defaultWH == "" {
			*defaultWH = "default"
		}
	}
	for i, spec := range warehouses {
		name, loc, ok := strings.Cut(spec, "=")
		if !ok {
			return fmt.Errorf("--warehouse %q: want NAME=URI", spec)
		}
		if _, err := svc.EnsureWarehouse(ctx, name, loc); err != nil {
			return fmt.Errorf("warehouse %s: %w", name, err)
		}
		if i == 0 && *defaultWH == "" {
			*defaultWH = name
		}
	}

	srv := server.New(svc, server.Config{
		DefaultWarehouse: *defaultWH, IdempotencyLifetime: *idemLife, Registry: reg, Logger: log,
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	httpSrv := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	mode := "postgres"
	if sf.embedded() {
		mode = "sqlite:" + sf.sqlitePath()
	}
	log.Info("catalog listening", "addr", ln.Addr().String(), "store", mode, "default_warehouse", *defaultWH)
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loadSealer builds the secret sealer from --secret-key, or in embedded
// mode from <data-dir>/secret.key (created on first use, mode 0600).
// Without either, storage profiles with secrets are refused.
func loadSealer(b64 string, sf storageFlags) (*credentials.Sealer, error) {
	if b64 == "" && sf.embedded() {
		path := filepath.Join(sf.dataDir, "secret.key")
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			key := make([]byte, 32)
			if _, err := rand.Read(key); err != nil {
				return nil, err
			}
			data = []byte(base64.StdEncoding.EncodeToString(key))
			if err := os.WriteFile(path, data, 0o600); err != nil {
				return nil, err
			}
		} else if err != nil {
			return nil, err
		}
		b64 = strings.TrimSpace(string(data))
	}
	if b64 == "" {
		return credentials.NewSealer(nil)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("--secret-key: %w", err)
	}
	return credentials.NewSealer(key)
}

func openStore(ctx context.Context, sf storageFlags, migrate bool) (interface {
	store.Store
}, error) {
	if sf.embedded() {
		if err := os.MkdirAll(sf.dataDir, 0o755); err != nil {
			return nil, err
		}
		return sqlstore.OpenSQLite(ctx, sf.sqlitePath())
	}
	return sqlstore.OpenPostgres(ctx, sf.databaseURL, migrate)
}
