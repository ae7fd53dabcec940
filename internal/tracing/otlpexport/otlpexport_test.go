package otlpexport

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

func clearEnv(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
}

// TestEnabled: off unless the flag or one of the standard endpoint
// variables is set; OTEL_SDK_DISABLED=true turns it off regardless.
func TestEnabled(t *testing.T) {
	clearEnv(t)
	require.False(t, Config{}.Enabled())
	tp, shutdown, err := Start(context.Background(), Config{})
	require.NoError(t, err)
	require.Nil(t, tp, "off: no provider at all")
	require.NoError(t, shutdown(context.Background()))
	require.True(t, Config{Endpoint: "http://c:4318"}.Enabled())
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")
	require.True(t, Config{}.Enabled())
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces")
	require.True(t, Config{}.Enabled())
	t.Setenv("OTEL_SDK_DISABLED", "true")
	require.False(t, Config{Endpoint: "http://c:4318"}.Enabled())
}

// TestEndpointURL: a base URL gets the traces path, a URL with a path is
// kept, anything but an absolute http(s) URL is refused.
func TestEndpointURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://c:4318": "http://c:4318/v1/traces", "https://c:4318/": "https://c:4318/v1/traces",
		"http://c:4318/otlp/v1/traces": "http://c:4318/otlp/v1/traces",
	} {
		got, err := endpointURL(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got)
	}
	for _, bad := range []string{"c:4318", "grpc://c:4317", "http://", "/v1/traces", "http://[::1"} {
		_, err := endpointURL(bad)
		require.Error(t, err, bad)
		_, _, err = Start(context.Background(), Config{Endpoint: bad})
		require.ErrorContains(t, err, "--otlp-endpoint", bad)
	}
}

// TestResource: service.name is lakehold unless OTEL_SERVICE_NAME says
// otherwise; the version is reported.
func TestResource(t *testing.T) {
	clearEnv(t)
	name := func() string {
		res, err := newResource(context.Background(), "v1.2.3")
		require.NoError(t, err)
		got := map[string]string{}
		for _, kv := range res.Attributes() {
			got[string(kv.Key)] = kv.Value.String()
		}
		require.Equal(t, "v1.2.3", got[string(semconv.ServiceVersionKey)])
		return got[string(semconv.ServiceNameKey)]
	}
	require.Equal(t, DefaultServiceName, name())
	t.Setenv("OTEL_SERVICE_NAME", "catalog-eu")
	require.Equal(t, "catalog-eu", name())
}
