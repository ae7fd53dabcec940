package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// jobFlags are the flags of the job workers that serve and worker start.
type jobFlags struct {
	workers    int
	jobTimeout time.Duration
}

func registerJobFlags(fs *flag.FlagSet, defaultWorkers int) (*jobFlags, error) {
	jf := &jobFlags{}
	n, err := envIntOr("CATALOG_WORKERS", defaultWorkers)
	fs.IntVar(&jf.workers, "workers", n, "background jobs (purge after a drop, ...) this replica runs at once; 0: none here, another replica or `catalog worker` runs them [CATALOG_WORKERS]")
	fs.DurationVar(&jf.jobTimeout, "job-timeout", envDuration("CATALOG_JOB_TIMEOUT", 10*time.Minute), "an attempt of a job running longer is cancelled and retried; a job whose replica died runs again one minute past this [CATALOG_JOB_TIMEOUT]")
	return jf, err
}

func (jf *jobFlags) check(workerOnly bool) error {
	switch {
	case jf.workers < 0:
		return errors.New("--workers must not be negative")
	case workerOnly && jf.workers == 0:
		return errors.New("--workers must be at least 1 for `catalog worker`")
	case jf.jobTimeout <= 0:
		return errors.New("--job-timeout must be positive")
	}
	return nil
}

// start runs the workers (none with --workers 0); the returned stop waits
// for running attempts up to 20 s, then cancels them (they run again
// later, on any replica).
func (jf *jobFlags) start(ctx context.Context, st store.Store, svc *service.Service, reg *prometheus.Registry, log *slog.Logger) (stop func(), err error) {
	if jf.workers == 0 {
		return func() {}, nil
	}
	observe := server.JobObserver(reg)
	handlers := map[string]store.JobHandler{}
	for kind, h := range svc.JobHandlers() {
		handlers[kind] = func(ctx context.Context, j *store.JobInfo) error {
			err := h(ctx, j)
			observe(kind, err)
			var snooze *store.JobSnooze
			if err != nil && !errors.As(err, &snooze) {
				// Handlers' errors are the catalog's own words, safe to log.
				log.WarnContext(ctx, "job attempt failed", "kind", kind, "job", j.ID, "attempt", j.Attempt, "error", err.Error())
			}
			return err
		}
	}
	w, err := st.StartWorkers(ctx, store.WorkerConfig{Workers: jf.workers, Handlers: handlers, JobTimeout: jf.jobTimeout,
		Logger: slog.New(redactErrors{log.Handler().WithAttrs([]slog.Attr{slog.String("component", "jobs")})})})
	if err != nil {
		return nil, err
	}
	log.Info("job workers started", "workers", jf.workers)
	// The events' recurring jobs (prune, one delivery job per sink) are
	// unique: every replica with workers enqueues them, one of each runs.
	if err := st.EnqueueJobs(ctx, svc.Events().Jobs()...); err != nil {
		log.Warn("events: cannot enqueue the event jobs; a restart or another replica enqueues them", "error", err.Error())
	}
	// So are the reports' prune and the tombstone prune.
	if err := st.EnqueueJobs(ctx, svc.Reports().Jobs()...); err != nil {
		log.Warn("reports: cannot enqueue the report prune; a restart or another replica enqueues it", "error", err.Error())
	}
	if err := st.EnqueueJobs(ctx, svc.Upkeep().Jobs()...); err != nil {
		log.Warn("upkeep: cannot enqueue the tombstone prune; a restart or another replica enqueues it", "error", err.Error())
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := w.Stop(sctx); err != nil {
			log.Warn("job workers stopped with attempts cut short; they run again later")
		}
	}, nil
}

// redactErrors is the log handler River gets: River logs the errors of its
// own database calls as they come from the driver, whose text can name
// hosts, users and values, so error attributes are withheld and only
// River's message and the rest stay. River logs only warnings and errors.
type redactErrors struct{ slog.Handler }

func (h redactErrors) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h redactErrors) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" || a.Key == "err" {
			a = slog.String(a.Key, "withheld (database driver text)")
		}
		out.AddAttrs(a)
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h redactErrors) WithAttrs(as []slog.Attr) slog.Handler {
	return redactErrors{h.Handler.WithAttrs(as)}
}

func (h redactErrors) WithGroup(name string) slog.Handler {
	return redactErrors{h.Handler.WithGroup(name)}
}

// workerHandler is what `catalog worker` serves on --listen: liveness,
// readiness (the database answers) and the metrics of its job attempts and
// of the shared queue.
func workerHandler(svc *service.Service, reg *prometheus.Registry) http.Handler {
	reg.MustRegister(server.JobsCollector(svc))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := svc.Ping(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}
