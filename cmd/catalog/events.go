package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lakehold/catalog/internal/eventsink"
	"github.com/lakehold/catalog/service"
)

// eventFlags configure change events (docs/events.md).
type eventFlags struct {
	retention     time.Duration
	source        string
	natsURL       string
	natsSubject   string
	natsStream    string
	natsCreate    bool
	natsCreds     string
	webhookURL    string
	webhookSecret string
}

func registerEventFlags(fs *flag.FlagSet) *eventFlags {
	ef := &eventFlags{}
	fs.DurationVar(&ef.retention, "events-retention", envDuration("CATALOG_EVENTS_RETENTION", 7*24*time.Hour), "how long change events stay in the catalog database for POST /v1/{prefix}/events and the sinks; 0: record no events [CATALOG_EVENTS_RETENTION]")
	fs.StringVar(&ef.source, "events-source", envOr("CATALOG_EVENTS_SOURCE", "/lakehold"), "the CloudEvents source attribute of pushed events (e.g. the catalog's public URL) [CATALOG_EVENTS_SOURCE]")
	fs.StringVar(&ef.natsURL, "events-nats-url", os.Getenv("CATALOG_EVENTS_NATS_URL"), "push events to this NATS server's JetStream (nats://host:4222) [CATALOG_EVENTS_NATS_URL]")
	fs.StringVar(&ef.natsSubject, "events-nats-subject", envOr("CATALOG_EVENTS_NATS_SUBJECT", "lakehold.events"), "NATS subject prefix: an event goes to <prefix>.<operation> [CATALOG_EVENTS_NATS_SUBJECT]")
	fs.StringVar(&ef.natsStream, "events-nats-stream", envOr("CATALOG_EVENTS_NATS_STREAM", "LAKEHOLD_EVENTS"), "JetStream stream that takes <prefix>.> [CATALOG_EVENTS_NATS_STREAM]")
	fs.BoolVar(&ef.natsCreate, "events-nats-create-stream", envBool("CATALOG_EVENTS_NATS_CREATE_STREAM", true), "create the stream when it is missing [CATALOG_EVENTS_NATS_CREATE_STREAM]")
	fs.StringVar(&ef.natsCreds, "events-nats-creds", os.Getenv("CATALOG_EVENTS_NATS_CREDS"), "NATS credentials file (JWT and NKey seed) [CATALOG_EVENTS_NATS_CREDS]")
	fs.StringVar(&ef.webhookURL, "events-webhook-url", os.Getenv("CATALOG_EVENTS_WEBHOOK_URL"), "POST each event to this URL, signed as Standard Webhooks specify [CATALOG_EVENTS_WEBHOOK_URL]")
	fs.StringVar(&ef.webhookSecret, "events-webhook-secret", os.Getenv("CATALOG_EVENTS_WEBHOOK_SECRET"), "the webhook's signing secret (whsec_<base64> or at least 16 characters); prefer the environment variable [CATALOG_EVENTS_WEBHOOK_SECRET]")
	return ef
}

func (ef *eventFlags) check() error {
	switch {
	case ef.retention < 0:
		return errors.New("--events-retention must not be negative")
	case ef.retention == 0 && (ef.natsURL != "" || ef.webhookURL != ""):
		return errors.New("--events-nats-url and --events-webhook-url need --events-retention above 0")
	case ef.webhookURL != "" && ef.webhookSecret == "":
		return errors.New("--events-webhook-url needs --events-webhook-secret (CATALOG_EVENTS_WEBHOOK_SECRET)")
	}
	return nil
}

// build connects the configured sinks; the returned close releases them.
func (ef *eventFlags) build(ctx context.Context, reg *prometheus.Registry, log *slog.Logger) (service.EventOptions, func(), error) {
	opts := service.EventOptions{Retention: ef.retention, Source: ef.source, OnDelivery: deliveryObserver(reg)}
	closeAll := func() {
		for _, s := range opts.Sinks {
			_ = s.Close()
		}
	}
	if ef.natsURL != "" {
		n, err := eventsink.NewNATS(ctx, eventsink.NATSConfig{URL: ef.natsURL, Subject: ef.natsSubject, Stream: ef.natsStream,
			CreateStream: ef.natsCreate, CredsFile: ef.natsCreds})
		if err != nil {
			return opts, nil, fmt.Errorf("--events-nats-url: %w", err)
		}
		opts.Sinks = append(opts.Sinks, n)
	}
	if ef.webhookURL != "" {
		w, err := eventsink.NewWebhook(eventsink.WebhookConfig{URL: ef.webhookURL, Secret: ef.webhookSecret})
		if err != nil {
			closeAll()
			return opts, nil, fmt.Errorf("--events-webhook-url: %w", err)
		}
		opts.Sinks = append(opts.Sinks, w)
	}
	for _, s := range opts.Sinks {
		log.Info("events: pushing to sink", "sink", s.Name())
	}
	return opts, closeAll, nil
}

// deliveryObserver counts delivered events and failed delivery rounds per
// sink on /metrics.
func deliveryObserver(reg *prometheus.Registry) func(sink string, delivered int, err error) {
	if reg == nil {
		return nil
	}
	delivered := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalog_events_delivered_total",
		Help: "Change events a sink acknowledged."}, []string{"sink"})
	failed := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalog_events_delivery_failures_total",
		Help: "Delivery rounds that stopped at an event the sink did not take (retried)."}, []string{"sink"})
	reg.MustRegister(delivered, failed)
	return func(sink string, n int, err error) {
		delivered.WithLabelValues(sink).Add(float64(n))
		if err != nil {
			failed.WithLabelValues(sink).Inc()
		}
	}
}
