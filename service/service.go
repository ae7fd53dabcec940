// Package service is the catalog's logic between HTTP and storage: it
// validates requests, runs the optimistic commit protocol (load, check
// requirements, apply updates, write metadata, compare-and-swap the pointer)
// and turns store errors into the messages Iceberg clients expect. It knows
// nothing of HTTP; handlers in package server decode, call and encode.
package service

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tracing"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/service/changefeed"
	"github.com/lakehold/catalog/service/commitengine"
	"github.com/lakehold/catalog/service/functions"
	"github.com/lakehold/catalog/service/idempotent"
	"github.com/lakehold/catalog/service/maintenance"
	"github.com/lakehold/catalog/service/planning"
	"github.com/lakehold/catalog/service/reports"
	"github.com/lakehold/catalog/service/storageaccess"
	"github.com/lakehold/catalog/service/tableaccess"
	"github.com/lakehold/catalog/service/tablecommit"
	"github.com/lakehold/catalog/service/tables"
	"github.com/lakehold/catalog/service/upkeep"
	"github.com/lakehold/catalog/service/v4commits"
	"github.com/lakehold/catalog/service/v4migrate"
	"github.com/lakehold/catalog/service/v4read"
	"github.com/lakehold/catalog/service/views"
	"github.com/lakehold/catalog/service/warehouses"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/validation"
)

// Options configure a Service.
type Options struct {
	// MaxCommitAttempts bounds server-side retries of a commit that lost a
	// compare-and-swap race (default 6).
	MaxCommitAttempts int
	// MaxLeafEntries bounds the rows of a v4 leaf manifest written for
	// added files (default 2048).
	MaxLeafEntries int
	// MaxPlanTasks is how many file scan tasks a scan plan returns inline;
	// a larger plan is split into plan tasks fetched one by one (default
	// 1000).
	MaxPlanTasks int
	// VerifyMetadataOnLoad makes loadTable check that the metadata file
	// still exists (one stat); a missing file answers 404 NotFoundException.
	VerifyMetadataOnLoad bool
	// MaxClockSkew is how far ahead of the catalog's clock a committed
	// snapshot may be dated (default validation.DefaultMaxClockSkew, one
	// minute: a snapshot dated further ahead would make later commits from
	// writers with correct clocks fail until the clock caught up).
	MaxClockSkew time.Duration
	// MaxClockOffset is how far this process's clock may be from the
	// catalog database's (store.Store.ClockOffset) before the replica
	// refuses commits with 503 (default DefaultMaxClockOffset). The
	// catalog's own times come from the database's clock, but iceberg-go's
	// metadata builder stamps last-updated-ms and snapshot-log entries
	// with the process's clock: on a replica far off they would reorder
	// the table's logs.
	MaxClockOffset time.Duration
	// Authorizer decides access; nil allows everything.
	Authorizer Authorizer
	// Tokens signs built-in access tokens (POST /v1/oauth/tokens); nil
	// when authentication is off.
	Tokens TokenIssuer
	// MaxSessionAge bounds how long token exchanges may renew a session
	// begun by a client-credentials sign-in (default DefaultMaxSessionAge):
	// no token expires later than its session's start plus this, and
	// RefreshToken fails (ErrSessionExpired) once it is reached.
	MaxSessionAge time.Duration
	// VerifySecret checks a client secret against its stored hash
	// (default secret.Verify, argon2id); tests count calls with it.
	VerifySecret func(plain, encoded string) (bool, error)
	// Now is the clock of session ages (default Options.Clock); tests.
	Now func() time.Time
	// Credentials vends storage credentials on load; nil vends none.
	Credentials credentials.Vendor
	// Signer signs S3 requests for engines without credentials (remote
	// signing); nil signs none and never offers signing on load.
	Signer credentials.Signer
	// Sealer encrypts storage-profile secrets at rest; without a key,
	// profiles with secrets are refused.
	Sealer *credentials.Sealer
	// OnCommit observes the final outcome of every commit, of every kind
	// ("committed", "noop", "conflict", "requirement_failed", "rejected":
	// the client's mistake, 4xx; "unknown", "unavailable", "error": ours,
	// 5xx) for metrics; may be nil.
	OnCommit func(outcome string)
	Logger   *slog.Logger

	// Audit persists audit events; nil only logs them. The caller closes it.
	Audit *AuditLog

	// Events configure change events (events.go); the zero value records
	// none.
	Events EventOptions

	// ReportsRetention is how long engines' metrics reports are kept
	// (package reports); 0 stores none (they are checked and counted).
	ReportsRetention time.Duration
	// ReportsPerTable is how many reports of each type (scan, commit) a
	// table keeps, the newest; the hourly prune removes the rest, so a
	// table may exceed it until then. 0 is reports.DefaultPerTable.
	ReportsPerTable int

	// TracerProvider receives a span per commit attempt (tracing.go); nil:
	// no spans.
	TracerProvider trace.TracerProvider

	// Clock is the service's wall clock: the timestamps of snapshots it
	// writes, snapshot expiry, the clock-skew check of commits and the
	// time of audit events. nil: the store's estimate of the database's
	// clock (store.Store.Now), which every replica shares. Tests set it to
	// bypass that estimate.
	Clock func() time.Time
}

// Service implements the catalog operations.
type Service struct {
	store  store.Store
	files  *storage.Provider
	opts   Options
	log    *slog.Logger
	admin  *access.Admin // roles, grants, principals, tokens
	keys   *idempotent.Keys
	engine *commitengine.Engine   // the one commit loop
	tc     *tablecommit.Committer // table commits and the metadata files of every commit
	feed   *changefeed.Feed       // change events: the pull feed, prune and delivery
	reps   *reports.Reports       // engines' metrics reports: stored, listed, pruned

	ta      *tableaccess.Access  // warehouses, file IO, the table loader, authorize, events
	whs     *warehouses.Registry // warehouse CRUD and storage profiles
	tables  *tables.Tables       // table creates, loads, registers, lists, renames and drops
	readers *v4read.Readers      // v4 manifests and their caches
	planner *planning.Planner
	maint   *maintenance.Maintainer
	v4      *v4commits.Committer  // v4 snapshot commits and compaction
	broker  *storageaccess.Broker // storage access: credentials, signing, eligibility
	upkeep  *upkeep.Upkeep        // job handlers, scheduled policies, soft-deleted objects
	migrate *v4migrate.Migrator   // the upgrade to v4 and the export of v4 tables
	views   *views.Views          // view creates, loads, replaces and drops
	fns     *functions.Functions  // function creates, loads and drops
	tracer  trace.Tracer          // nil when tracing is off
	imports chan struct{}         // a slot per import running (MaxConcurrentImports)
}

// New returns a Service over st, writing files through files.
func New(st store.Store, files *storage.Provider, opts Options) *Service {
	if opts.MaxCommitAttempts <= 0 {
		opts.MaxCommitAttempts = 6
	}
	if opts.MaxLeafEntries <= 0 {
		opts.MaxLeafEntries = 2048
	}
	if opts.MaxPlanTasks <= 0 {
		opts.MaxPlanTasks = 1000
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
		if st != nil {
			opts.Clock = st.Now
		}
	}
	if opts.MaxClockSkew <= 0 {
		opts.MaxClockSkew = validation.DefaultMaxClockSkew
	}
	if opts.MaxClockOffset <= 0 {
		opts.MaxClockOffset = DefaultMaxClockOffset
	}
	if opts.Sealer == nil {
		opts.Sealer, _ = credentials.NewSealer(nil)
	}
	if opts.Authorizer == nil {
		opts.Authorizer = AllowAll{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = opts.Clock // sessions are dated by the database's clock
	}
	admin := access.NewAdmin(st, opts.Authorizer, access.AdminOptions{Tokens: opts.Tokens, MaxSessionAge: opts.MaxSessionAge,
		VerifySecret: opts.VerifySecret, Now: opts.Now, Logger: opts.Logger})
	s := &Service{store: st, files: files, opts: opts, log: opts.Logger,
		tracer: tracing.Tracer(opts.TracerProvider), admin: admin, keys: idempotent.New(st, opts.Clock, opts.Logger),
		imports: make(chan struct{}, MaxConcurrentImports)}
	s.ta = tableaccess.New(tableaccess.Options{Store: st, Files: files, Authorizer: opts.Authorizer, Sealer: opts.Sealer,
		Credentials: opts.Credentials, EventsOn: opts.Events.Retention > 0, Clock: opts.Clock,
		MaxClockOffset: opts.MaxClockOffset, MaxClockSkew: opts.MaxClockSkew, Logger: opts.Logger})
	s.buildRooms()
	return s
}
