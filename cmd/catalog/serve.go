package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/console"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
	"github.com/lakehold/catalog/validation"
)

// serveContext is the context serve runs in, cancelled by SIGINT or
// SIGTERM; tests stop serve through it.
var serveContext = signalContext

// setupServe registers the flags of `catalog serve`; its run serves until
// SIGINT or SIGTERM.
func setupServe(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
	return setupServeMode(fs, e, false)
}

// setupWorker registers the flags of `catalog worker`: serve's, with the
// job workers and no API (only /healthz, /readyz and /metrics on --listen).
func setupWorker(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
	return setupServeMode(fs, e, true)
}

func setupServeMode(fs *flag.FlagSet, e *cmdEnv, workerOnly bool) func([]string) error {
	stderr := e.stderr
	var sf storageFlags
	sf.register(fs)
	defaultListen, defaultWorkers := "127.0.0.1:8181", 2
	if workerOnly {
		defaultListen, defaultWorkers = "127.0.0.1:8182", 4
	}
	listen := fs.String("listen", envOr("CATALOG_LISTEN", defaultListen), "address to serve on [CATALOG_LISTEN]")
	var warehouses multiFlag
	fs.Var(&warehouses, "warehouse", "a warehouse to create if missing; repeatable [CATALOG_WAREHOUSES, comma-separated]")
	defaultWH := fs.String("default-warehouse", os.Getenv("CATALOG_DEFAULT_WAREHOUSE"), "warehouse served by /v1/config without ?warehouse= (embedded default: default) [CATALOG_DEFAULT_WAREHOUSE]")
	migrate := fs.Bool("migrate", envBool("CATALOG_MIGRATE", true), "apply Postgres migrations at start [CATALOG_MIGRATE]")
	verify := fs.Bool("verify-metadata-on-load", envBool("CATALOG_VERIFY_METADATA_ON_LOAD", true), "stat the metadata file on every loadTable (404 when it vanished) [CATALOG_VERIFY_METADATA_ON_LOAD]")
	skew := fs.Duration("max-clock-skew", envDuration("CATALOG_MAX_CLOCK_SKEW", validation.DefaultMaxClockSkew), "how far ahead of the server clock a committed snapshot may be dated [CATALOG_MAX_CLOCK_SKEW]")
	maxOffset := fs.Duration("max-clock-offset", envDuration("CATALOG_MAX_CLOCK_OFFSET", service.DefaultMaxClockOffset), "how far this machine's clock may be from the catalog database's before the replica refuses commits (503) and /readyz fails; the catalog dates its own times by the database's clock [CATALOG_MAX_CLOCK_OFFSET]")
	idemLife := fs.Duration("idempotency-lifetime", envDuration("CATALOG_IDEMPOTENCY_LIFETIME", 30*time.Minute), "how long Idempotency-Key outcomes are kept [CATALOG_IDEMPOTENCY_LIFETIME]")
	logLevel := fs.String("log-level", envOr("CATALOG_LOG_LEVEL", "info"), "level of the JSON log lines on stderr: debug (adds the cause of every 4xx), info (the start line and one line per request), warn or error [CATALOG_LOG_LEVEL]")
	secretKey := fs.String("secret-key", os.Getenv("CATALOG_SECRET_KEY"), "base64 32-byte key sealing storage-profile secrets (embedded default: <data-dir>/secret.key) [CATALOG_SECRET_KEY]")
	dbMaxEnv, envErr := envInt("CATALOG_DB_MAX_CONNS")
	planTasksEnv, planErr := envIntOr("CATALOG_MAX_PLAN_TASKS", 1000)
	maxPlanTasks := fs.Int("max-plan-tasks", planTasksEnv, "how many file scan tasks a scan plan answers inline; a larger plan is split into plan tasks the client fetches from .../tasks [CATALOG_MAX_PLAN_TASKS]")
	dbMaxConns := fs.Int("db-max-conns", dbMaxEnv, fmt.Sprintf("Postgres connection pool size; 0 takes pool_max_conns from the database URL, else max(16, 4×GOMAXPROCS) = %d here [CATALOG_DB_MAX_CONNS]", sqlstore.DefaultMaxConns()))
	dbSwapTimeout := fs.Duration("db-swap-timeout", envDuration("CATALOG_DB_SWAP_TIMEOUT", 10*time.Second), "Postgres: how long a commit's pointer swap or COMMIT may take once sent; past it the commit is answered 500 CommitStateUnknown (its files kept) unless a re-read shows it landed [CATALOG_DB_SWAP_TIMEOUT]")
	storageTimeout := fs.Duration("storage-timeout", envDuration("CATALOG_STORAGE_TIMEOUT", 30*time.Second), "S3: how long a request to the object store may go without receiving data before it is given up (the SDK retries it, 3 attempts in all; a commit whose metadata file cannot be written is answered 503); 0: no bound [CATALOG_STORAGE_TIMEOUT]")
	authz := fs.String("authorization", os.Getenv("CATALOG_AUTHORIZATION"), "allow-all or rbac (roles and grants, docs/access.md); default rbac with --auth on, allow-all without [CATALOG_AUTHORIZATION]")
	authzTTL := fs.Duration("authorization-cache-ttl", envDuration("CATALOG_AUTHORIZATION_CACHE_TTL", time.Second), "rbac: how long a replica reuses an authorization decision (0: never; grants and revokes apply within this time) [CATALOG_AUTHORIZATION_CACHE_TTL]")
	bootstrapAdmin := fs.String("bootstrap-admin", os.Getenv("CATALOG_BOOTSTRAP_ADMIN"), "KIND:NAME (builtin:admin, oidc:<sub>, group:admins) given role server-admin, every privilege, at start [CATALOG_BOOTSTRAP_ADMIN]")
	allowedOrigins := fs.String("allowed-origins", os.Getenv("CATALOG_ALLOWED_ORIGINS"), "comma-separated browser origins (scheme://host[:port]) accepted besides the catalog's own, e.g. the public URL of a proxy that rewrites Host; a request with any other Origin header gets 403 [CATALOG_ALLOWED_ORIGINS]")
	allowedHosts := fs.String("allowed-hosts", os.Getenv("CATALOG_ALLOWED_HOSTS"), "comma-separated Host names or addresses accepted besides loopback ones (any port; .example.com: the domain and its subdomains; *: any). With --auth none any other Host gets 403, against DNS rebinding; with --auth on the Host is checked only when this is set [CATALOG_ALLOWED_HOSTS]")
	lf := registerLimitFlags(fs)
	af := registerAuthFlags(fs)
	sif := registerSignInFlags(fs)
	tf := registerTraceFlags(fs)
	jf, jobsEnvErr := registerJobFlags(fs, defaultWorkers)
	ef := registerEventFlags(fs)
	reportsRetention := fs.Duration("reports-retention", envDuration("CATALOG_REPORTS_RETENTION", 30*24*time.Hour), "how long engines' scan and commit reports (POST .../metrics) stay in the catalog database for GET /management/v1/.../tables/{table}/reports; 0: check and count them, store none [CATALOG_REPORTS_RETENTION]")
	perTableEnv, perTableErr := envIntOr("CATALOG_REPORTS_PER_TABLE", 10000)
	reportsPerTable := fs.Int("reports-per-table", perTableEnv, "how many scan reports and how many commit reports each table keeps, the newest; the hourly prune removes the rest, so a table may hold more until it runs [CATALOG_REPORTS_PER_TABLE]")
	return func([]string) error {
		if envErr != nil {
			return envErr
		}
		if jobsEnvErr != nil {
			return jobsEnvErr
		}
		if err := jf.check(workerOnly); err != nil {
			return err
		}
		if err := ef.check(); err != nil {
			return err
		}
		if *reportsRetention < 0 {
			return errors.New("--reports-retention must not be negative")
		}
		if perTableErr != nil {
			return perTableErr
		}
		if *reportsPerTable < 1 {
			return fmt.Errorf("--reports-per-table %d: want at least 1", *reportsPerTable)
		}
		if planErr != nil {
			return planErr
		}
		if *maxPlanTasks < 1 {
			return fmt.Errorf("--max-plan-tasks %d: want at least 1", *maxPlanTasks)
		}
		if err := af.resolve(*listen); err != nil {
			return err
		}
		if *dbMaxConns < 0 {
			return errors.New("--db-max-conns must not be negative")
		}
		if *storageTimeout < 0 {
			return errors.New("--storage-timeout must not be negative")
		}
		if *dbSwapTimeout <= 0 {
			return errors.New("--db-swap-timeout must be positive")
		}
		origins, err := server.ParseAllowedOrigins(*allowedOrigins)
		if err != nil {
			return fmt.Errorf("--allowed-origins: %w", err)
		}
		hosts, err := server.ParseAllowedHosts(*allowedHosts)
		if err != nil {
			return fmt.Errorf("--allowed-hosts: %w", err)
		}
		if err := lf.check(); err != nil {
			return err
		}
		if err := sif.check(); err != nil {
			return err
		}
		level, err := parseLogLevel(*logLevel)
		if err != nil {
			return err
		}
		if v := os.Getenv("CATALOG_WAREHOUSES"); v != "" && len(warehouses) == 0 {
			warehouses = strings.Split(v, ",")
		}
		log := newLogger(stderr, level)
		if af.mode != "on" && !loopbackAddr(*listen) && len(hosts) == 0 {
			log.Warn("authentication is off: only requests naming a loopback host (localhost, 127.0.0.1, [::1]) are answered; clients that connect by another name or address need --allowed-hosts")
		}
		ctx, stop := serveContext()
		defer stop()
		tp, stopTracing, err := tf.start(ctx, log)
		if err != nil {
			return err
		}
		defer stopTracing() // last: flushes the spans of everything below

		opened, err := openStore(ctx, sf, *migrate, sqlstore.WithMaxConns(*dbMaxConns), sqlstore.WithSwapTimeout(*dbSwapTimeout))
		if err != nil {
			return err
		}
		defer opened.Close()
		st := tracedStore(opened, tp, sf)

		key, err := loadSecretKey(*secretKey, sf)
		if err != nil {
			return err
		}
		sealer, err := credentials.NewSealer(key)
		if err != nil {
			return err
		}
		var svc *service.Service
		auth, tokens, err := af.build(ctx, key, tp, func() *service.Service { return svc })
		if err != nil {
			return err
		}
		authorizer, err := pickAuthorizer(authz, af.mode, *authzTTL, st, log)
		if err != nil {
			return err
		}
		reg := prometheus.NewRegistry()
		// Closed (flushing queued audit rows) after the HTTP server stopped and
		// before the store closes.
		audit := access.NewAuditLog(st, service.AuditLogOptions{Logger: log, OnWriteFailure: server.AuditWriteFailures(reg),
			OnWriteRetry: server.AuditWriteRetries(reg)})
		defer audit.Close()
		events, closeSinks, err := ef.build(ctx, reg, log)
		if err != nil {
			return err
		}
		defer closeSinks() // after the job workers stopped
		files := storage.NewProvider(storage.WithS3ReadTimeout(*storageTimeout), storage.WithTracerProvider(tp))
		vendor := vending.New(sealer, vending.WithTracerProvider(tp))
		svc = service.New(st, files, service.Options{
			Tokens:               tokens,
			MaxSessionAge:        sif.maxSessionAge,
			Authorizer:           authorizer,
			VerifyMetadataOnLoad: *verify,
			MaxClockSkew:         *skew,
			MaxClockOffset:       *maxOffset,
			MaxPlanTasks:         *maxPlanTasks,
			OnCommit:             server.CommitObserver(reg),
			Logger:               log,
			Sealer:               sealer,
			Credentials:          vendor,
			Signer:               vendor,
			Audit:                audit,
			TracerProvider:       tp,
			Events:               events,
			ReportsRetention:     *reportsRetention,
			ReportsPerTable:      *reportsPerTable,
		})
		if err := checkDataDirMoved(ctx, st, sf); err != nil {
			return err
		}
		if *defaultWH, err = ensureWarehouses(ctx, svc, sf, warehouses, *defaultWH); err != nil {
			return err
		}

		if *bootstrapAdmin != "" {
			a, err := access.ParseAssignee(*bootstrapAdmin)
			if err != nil {
				return fmt.Errorf("--bootstrap-admin: %w", err)
			}
			if err := svc.Admin().EnsureBootstrapAdmin(ctx, a); err != nil {
				return fmt.Errorf("--bootstrap-admin: %w", err)
			}
		}

		stopJobs, err := jf.start(ctx, st, svc, reg, log)
		if err != nil {
			return err
		}
		defer stopJobs() // before the audit log and the store close
		if workerOnly {
			ln, err := net.Listen("tcp", *listen)
			if err != nil {
				return err
			}
			log.Info("catalog worker running", "listen", ln.Addr().String(), "workers", jf.workers)
			return serveUntilDone(ctx, log, lf.limits.HTTPServer(workerHandler(svc, reg)), ln)
		}
		srv := server.New(svc, server.Config{
			DefaultWarehouse: *defaultWH, IdempotencyLifetime: *idemLife, Registry: reg, Logger: log,
			MaxRequestBody: int64(lf.maxBody), Auth: auth, AllowedOrigins: origins, AllowedHosts: hosts,
			SignIn: sif.cfg, TracerProvider: tp,
			// Built-in tokens exist whenever authentication is on (build
			// returns a signer then), so built-in principals may sign in to
			// the console too, beside the OIDC provider if one is set.
			Console: console.Options{OIDCIssuer: af.oidcIssuer, OIDCClientID: af.consoleClientID, BuiltinSignIn: tokens != nil},
		})
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			return err
		}
		log.Info("catalog listening", startAttrs(readVersion(), ln.Addr().String(), sf, *defaultWH, af.mode, *authz)...)
		return serveUntilDone(ctx, log, lf.limits.HTTPServer(srv), ln)
	}
}

// pickAuthorizer resolves --authorization (empty: rbac with
// authentication on, allow-all without; *authz is set to the choice) and
// builds it: nil for allow-all. It returns an error for an unknown mode or
// a decision cache longer than 2 s.
func pickAuthorizer(authz *string, authMode string, ttl time.Duration, st store.Store, log *slog.Logger) (service.Authorizer, error) {
	if *authz == "" {
		*authz = "allow-all"
		if authMode == "on" {
			*authz = "rbac"
		}
	}
	switch *authz {
	case "allow-all":
		if authMode == "on" {
			log.Warn("authentication is on but authorization is allow-all: every caller with a valid token may do everything")
		}
		return nil, nil
	case "rbac":
		if ttl > 2*time.Second {
			return nil, errors.New("--authorization-cache-ttl: at most 2s (revokes must apply quickly on every replica)")
		}
		return access.NewRBAC(st).WithDecisionCache(ttl), nil
	}
	return nil, fmt.Errorf("--authorization %q: want allow-all or rbac", *authz)
}

// ensureWarehouses creates the --warehouse NAME=URI specs that are missing
// (embedded mode first adds "default" under the data directory) and
// returns the default warehouse: defaultWH, else the first one. It returns
// an error for a malformed spec or a warehouse that cannot be created.
func ensureWarehouses(ctx context.Context, svc *service.Service, sf storageFlags, specs []string, defaultWH string) (string, error) {
	if sf.embedded() {
		abs, err := filepath.Abs(filepath.Join(sf.dataDir, "warehouse"))
		if err != nil {
			return "", err
		}
		specs = append([]string{"default=file://" + abs}, specs...)
	}
	for _, spec := range specs {
		name, loc, ok := strings.Cut(spec, "=")
		if !ok {
			return "", fmt.Errorf("--warehouse %q: want NAME=URI", spec)
		}
		if _, err := svc.EnsureWarehouse(ctx, name, loc); err != nil {
			return "", fmt.Errorf("warehouse %s: %w", name, err)
		}
		if defaultWH == "" {
			defaultWH = name
		}
	}
	return defaultWH, nil
}

// serveUntilDone serves on ln until the server fails (its error is
// returned) or ctx ends (SIGINT, SIGTERM), then shuts down gracefully,
// giving requests in flight 20 s.
func serveUntilDone(ctx context.Context, log *slog.Logger, httpSrv *http.Server, ln net.Listener) error {
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

// loadSealer builds the secret sealer from the secret key (loadSecretKey).
// Without one, storage profiles with secrets are refused.
func loadSealer(b64 string, sf storageFlags) (*credentials.Sealer, error) {
	key, err := loadSecretKey(b64, sf)
	if err != nil {
		return nil, err
	}
	return credentials.NewSealer(key)
}

// loadSecretKey returns the catalog's secret key from --secret-key, or in
// embedded mode from <data-dir>/secret.key (created on first use, mode
// 0600); nil when there is neither.
func loadSecretKey(b64 string, sf storageFlags) ([]byte, error) {
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
		return nil, nil
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("--secret-key: %w", err)
	}
	return key, nil
}

func openStore(ctx context.Context, sf storageFlags, migrate bool, opts ...sqlstore.Option) (interface {
	store.Store
}, error) {
	if skew := testClockSkew(); skew != 0 {
		opts = append(opts, sqlstore.WithLocalClock(func() time.Time { return time.Now().Add(skew) }))
	}
	if sf.embedded() {
		if err := os.MkdirAll(sf.dataDir, 0o755); err != nil {
			return nil, err
		}
		return sqlstore.OpenSQLite(ctx, sf.sqlitePath(), opts...)
	}
	return sqlstore.OpenPostgres(ctx, sf.databaseURL, migrate, opts...)
}

// envInt reads a non-negative integer from the environment: 0 when unset,
// an error when set to anything else.
func envInt(key string) (int, error) {
	v := os.Getenv(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a non-negative integer", key, v)
	}
	return n, nil
}

// limitFlags bound what a client can make the server hold (README, flags).
type limitFlags struct {
	maxBody byteSize
	limits  server.Limits
}

func registerLimitFlags(fs *flag.FlagSet) *limitFlags {
	d := server.DefaultLimits
	lf := &limitFlags{maxBody: byteSize(envSize("CATALOG_MAX_REQUEST_BODY", server.DefaultMaxRequestBody))}
	fs.Var(&lf.maxBody, "max-request-body", "largest request body accepted, in bytes or with KiB/MiB/GiB; larger ones get 413 [CATALOG_MAX_REQUEST_BODY]")
	fs.DurationVar(&lf.limits.ReadHeaderTimeout, "read-header-timeout", envDuration("CATALOG_READ_HEADER_TIMEOUT", d.ReadHeaderTimeout), "time a client has to send its request headers [CATALOG_READ_HEADER_TIMEOUT]")
	fs.DurationVar(&lf.limits.ReadTimeout, "read-timeout", envDuration("CATALOG_READ_TIMEOUT", d.ReadTimeout), "time a client has to send its whole request, body included [CATALOG_READ_TIMEOUT]")
	fs.DurationVar(&lf.limits.WriteTimeout, "write-timeout", envDuration("CATALOG_WRITE_TIMEOUT", d.WriteTimeout), "time from the end of the request headers to the end of the response [CATALOG_WRITE_TIMEOUT]")
	fs.DurationVar(&lf.limits.IdleTimeout, "idle-timeout", envDuration("CATALOG_IDLE_TIMEOUT", d.IdleTimeout), "how long an idle keep-alive connection stays open [CATALOG_IDLE_TIMEOUT]")
	lf.limits.MaxHeaderBytes = int(envSize("CATALOG_MAX_HEADER_BYTES", int64(d.MaxHeaderBytes)))
	fs.Var((*intSize)(&lf.limits.MaxHeaderBytes), "max-header-bytes", "largest request header block accepted, in bytes or with KiB/MiB; larger ones get 431 [CATALOG_MAX_HEADER_BYTES]")
	return lf
}

// check refuses limits that would disable a bound: the http.Server treats
// zero as "no timeout".
func (lf *limitFlags) check() error {
	l := lf.limits
	if lf.maxBody <= 0 || l.MaxHeaderBytes <= 0 {
		return errors.New("--max-request-body and --max-header-bytes must be positive")
	}
	if l.ReadHeaderTimeout <= 0 || l.ReadTimeout <= 0 || l.WriteTimeout <= 0 || l.IdleTimeout <= 0 {
		return errors.New("--read-header-timeout, --read-timeout, --write-timeout and --idle-timeout must be positive")
	}
	return nil
}

// byteSize is a flag holding a size in bytes, written as a number with an
// optional KiB, MiB or GiB suffix.
type byteSize int64

func (b *byteSize) String() string { return formatSize(int64(*b)) }

func (b *byteSize) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

// intSize is byteSize for an int field.
type intSize int

func (i *intSize) String() string { return formatSize(int64(*i)) }

func (i *intSize) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	if n > 1<<30 {
		return fmt.Errorf("size %q is too large", v)
	}
	*i = intSize(n)
	return nil
}

// formatSize writes n as parseSize reads it, in the largest unit that
// divides it: 8MiB, 65537.
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func parseSize(v string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(v, suffix) {
			v, mult = strings.TrimSuffix(v, suffix), m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("invalid size %q: want a positive number of bytes, optionally with KiB, MiB or GiB", v)
	}
	return n * mult, nil
}

// envSize reads a size from the environment, falling back to def when the
// variable is unset or invalid.
func envSize(key string, def int64) int64 {
	if v := os.Getenv(key); v != "" {
		if n, err := parseSize(v); err == nil {
			return n
		}
	}
	return def
}

// authFlags select how callers are authenticated (README, Authentication).
type authFlags struct {
	mode           string // "none" or "on"
	oidcIssuer     string
	oidcAudience   string
	subjectClaim   string
	groupsClaim    string
	tokenLifetime  time.Duration
	insecureNoAuth bool
	// consoleClientID is the public client the console signs in as.
	consoleClientID string
}

func registerAuthFlags(fs *flag.FlagSet) *authFlags {
	af := &authFlags{}
	fs.StringVar(&af.mode, "auth", envOr("CATALOG_AUTH", "none"), "none or on: require a bearer token on every catalog and management route [CATALOG_AUTH]")
	fs.StringVar(&af.oidcIssuer, "oidc-issuer", os.Getenv("CATALOG_OIDC_ISSUER"), "accept JWTs of this OpenID Connect issuer URL; implies --auth on [CATALOG_OIDC_ISSUER]")
	fs.StringVar(&af.oidcAudience, "oidc-audience", os.Getenv("CATALOG_OIDC_AUDIENCE"), "audience the OIDC tokens must carry (required with --oidc-issuer) [CATALOG_OIDC_AUDIENCE]")
	fs.StringVar(&af.subjectClaim, "oidc-subject-claim", envOr("CATALOG_OIDC_SUBJECT_CLAIM", "sub"), "claim naming the principal [CATALOG_OIDC_SUBJECT_CLAIM]")
	fs.StringVar(&af.groupsClaim, "oidc-groups-claim", envOr("CATALOG_OIDC_GROUPS_CLAIM", "groups"), "claim holding the principal's groups (array or string, kept verbatim) [CATALOG_OIDC_GROUPS_CLAIM]")
	fs.DurationVar(&af.tokenLifetime, "token-lifetime", envDuration("CATALOG_TOKEN_LIFETIME", authn.DefaultTokenLifetime), "lifetime of tokens from POST /v1/oauth/tokens [CATALOG_TOKEN_LIFETIME]")
	fs.StringVar(&af.consoleClientID, "console-client-id", envOr("CATALOG_CONSOLE_CLIENT_ID", "lakehold-console"), "public OIDC client the console at /ui signs in as (authorization code + PKCE; its tokens must carry --oidc-audience) [CATALOG_CONSOLE_CLIENT_ID]")
	fs.BoolVar(&af.insecureNoAuth, "insecure-no-auth", envBool("CATALOG_INSECURE_NO_AUTH", false), "allow serving a non-loopback address without authentication [CATALOG_INSECURE_NO_AUTH=1]")
	return af
}

// resolve checks the flags and applies the secure default: without
// authentication the catalog serves only loopback addresses, unless the
// operator says --insecure-no-auth.
func (af *authFlags) resolve(listen string) error {
	if af.oidcIssuer != "" {
		af.mode = "on"
	}
	switch af.mode {
	case "on":
		if af.oidcIssuer != "" && af.oidcAudience == "" {
			return errors.New("--oidc-issuer needs --oidc-audience: without it a token the provider issued for any other client would be accepted")
		}
		if af.tokenLifetime < time.Minute || af.tokenLifetime > 24*time.Hour {
			return errors.New("--token-lifetime must be between 1m and 24h")
		}
		return nil
	case "none":
	default:
		return fmt.Errorf("--auth %q: want none or on", af.mode)
	}
	if !af.insecureNoAuth && !loopbackAddr(listen) {
		return fmt.Errorf("refusing to serve %s without authentication: pass --auth on (CATALOG_AUTH=on), or --insecure-no-auth (CATALOG_INSECURE_NO_AUTH=1) on a trusted network", listen)
	}
	return nil
}

// loopbackAddr reports whether host:port can only be reached from this
// machine. An empty host or a name other than localhost may be reachable
// from elsewhere and is not loopback.
func loopbackAddr(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// build returns the authenticator and token signer, both nil when
// authentication is off. svc is called only once requests arrive, after
// the service exists; tp (nil: none) traces the OIDC provider's fetches.
func (af *authFlags) build(ctx context.Context, key []byte, tp trace.TracerProvider, svc func() *service.Service) (server.Authenticator, service.TokenIssuer, error) {
	if af.mode != "on" {
		return nil, nil, nil
	}
	if key == nil {
		return nil, nil, errors.New("--auth on needs a secret key: --secret-key (CATALOG_SECRET_KEY); embedded mode uses <data-dir>/secret.key")
	}
	// Built-in tokens are dated by the database's clock, which every
	// replica shares: one whose own clock is off neither issues tokens
	// another refuses nor accepts them past their expiry.
	builtin, err := authn.NewBuiltin(authn.BuiltinConfig{SecretKey: key, Lifetime: af.tokenLifetime,
		Now: func() time.Time { return svc().Now() },
		Generations: authn.GenerationsFunc(func(ctx context.Context, name string) (string, int64, error) {
			return svc().Admin().PrincipalGeneration(ctx, name)
		})})
	if err != nil {
		return nil, nil, err
	}
	var oidc *authn.OIDC
	if af.oidcIssuer != "" {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		oidc, err = authn.NewOIDC(dctx, authn.OIDCConfig{Issuer: af.oidcIssuer, Audience: af.oidcAudience,
			SubjectClaim: af.subjectClaim, GroupsClaim: af.groupsClaim, TracerProvider: tp})
		if err != nil {
			return nil, nil, err
		}
	}
	return authn.New(builtin, oidc), builtin, nil
}

// startAttrs are the attributes of the "catalog listening" line: the
// version, the URLs to open, the store's kind (never its URL, which may
// hold a password) and for the embedded store the absolute data directory,
// the default warehouse, authentication and authorization.
func startAttrs(v buildVersion, addr string, sf storageFlags, defaultWH, auth, authz string) []any {
	url := listenURL(addr)
	attrs := []any{"version", v.Version}
	if r := v.shortRevision(); r != "" {
		attrs = append(attrs, "revision", r)
	}
	attrs = append(attrs, "addr", addr, "url", url, "console", url+console.Prefix+"/")
	if sf.embedded() {
		dir, err := filepath.Abs(sf.dataDir)
		if err != nil {
			dir = sf.dataDir
		}
		attrs = append(attrs, "store", "sqlite", "data_dir", dir)
	} else {
		attrs = append(attrs, "store", "postgres")
	}
	return append(attrs, "default_warehouse", defaultWH, "auth", auth, "authorization", authz)
}

// listenURL is the http URL of a listening address; an unspecified host
// (0.0.0.0, [::]) is shown as localhost, the name that reaches it here.
func listenURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// parseLogLevel reads --log-level.
func parseLogLevel(s string) (slog.Level, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return lv, nil
}
