package tableaccess

import (
	"log/slog"
	"sync"
	"time"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/service/access"
	"github.com/lakehold/catalog/store"
)

// Options configure an Access; New fills no defaults, the service does.
type Options struct {
	Store store.Store
	// Files opens storage for a location and its properties.
	Files *storage.Provider
	// Authorizer decides access.
	Authorizer access.Authorizer
	// Sealer opens the secrets of storage profiles.
	Sealer *credentials.Sealer
	// Credentials may mint the catalog's own Azure SAS (CatalogSAS).
	Credentials credentials.Vendor
	// EventsOn reports whether changes record change events.
	EventsOn bool
	// Clock is the catalog's clock (the database's, as estimated).
	Clock func() time.Time
	// MaxClockOffset is how far this process's clock may be off the
	// database's before ClockGuard refuses commits.
	MaxClockOffset time.Duration
	// MaxClockSkew is how far ahead of Clock a committed snapshot may be
	// dated (CheckNewMetadata).
	MaxClockSkew time.Duration
	Logger       *slog.Logger
}

// Access is the shared way to tables; safe for concurrent use.
type Access struct {
	opts      Options
	meta      tablemeta.Cache
	whMu      sync.Mutex
	whEntries map[string]warehouseEntry
}

// New returns an Access over opts.
func New(opts Options) *Access {
	return &Access{opts: opts}
}

// Store is the catalog's store.
func (a *Access) Store() store.Store { return a.opts.Store }

// Files is the storage provider (listing, Iceberg IO).
func (a *Access) Files() *storage.Provider { return a.opts.Files }

// Now is the catalog's clock.
func (a *Access) Now() time.Time { return a.opts.Clock() }

// Logger receives what rooms log.
func (a *Access) Logger() *slog.Logger { return a.opts.Logger }

// Authorizer is the access decider rooms judge finer access with.
func (a *Access) Authorizer() access.Authorizer { return a.opts.Authorizer }
