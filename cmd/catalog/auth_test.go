package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/pgtest"
)

func parseAuthFlags(t *testing.T, args ...string) *authFlags {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	af := registerAuthFlags(fs)
	require.NoError(t, fs.Parse(args))
	return af
}

// TestSecureDefault: without authentication only loopback addresses are
// served, unless --insecure-no-auth says otherwise.
func TestSecureDefault(t *testing.T) {
	for _, tc := range []struct {
		listen string
		args   []string
		err    string
		mode   string
	}{
		{"127.0.0.1:8181", nil, "", "none"},
		{"localhost:8181", nil, "", "none"},
		{"[::1]:8181", nil, "", "none"},
		{"0.0.0.0:8181", nil, "refusing to serve 0.0.0.0:8181 without authentication", ""},
		{":8181", nil, "refusing", ""},
		{"[::]:8181", nil, "refusing", ""},
		{"catalog.internal:8181", nil, "refusing", ""},
		{"10.1.2.3:8181", nil, "refusing", ""},
		{"0.0.0.0:8181", []string{"--insecure-no-auth"}, "", "none"},
		{"0.0.0.0:8181", []string{"--auth", "on"}, "", "on"},
		{"0.0.0.0:8181", []string{"--auth", "maybe"}, "want none or on", ""},
		{"0.0.0.0:8181", []string{"--oidc-issuer", "https://idp"}, "needs --oidc-audience", ""},
		{"0.0.0.0:8181", []string{"--oidc-issuer", "https://idp", "--oidc-audience", "lakehold"}, "", "on"},
		{"127.0.0.1:8181", []string{"--auth", "on", "--token-lifetime", "1s"}, "--token-lifetime", ""},
	} {
		af := parseAuthFlags(t, tc.args...)
		err := af.resolve(tc.listen)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "%s %v", tc.listen, tc.args)
			continue
		}
		require.NoError(t, err, "%s %v", tc.listen, tc.args)
		require.Equal(t, tc.mode, af.mode, "%s %v", tc.listen, tc.args)
	}
}

func TestAuthFlagsFromEnv(t *testing.T) {
	t.Setenv("CATALOG_INSECURE_NO_AUTH", "1")
	require.NoError(t, parseAuthFlags(t).resolve("0.0.0.0:8181"))
	t.Setenv("CATALOG_INSECURE_NO_AUTH", "")
	t.Setenv("CATALOG_AUTH", "on")
	af := parseAuthFlags(t)
	require.NoError(t, af.resolve("0.0.0.0:8181"))
	require.Equal(t, "on", af.mode)
}

// TestServeRefusesOpenNetworkWithoutAuth: the refusal is one clear line
// and comes before anything is opened or created.
func TestServeRefusesOpenNetworkWithoutAuth(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var errb bytes.Buffer
	err := run([]string{"serve", "--data-dir", dir, "--listen", "0.0.0.0:0"}, &errb, &errb)
	require.ErrorContains(t, err, "--insecure-no-auth")
	require.NotContains(t, err.Error(), "\n")
	_, statErr := os.Stat(dir)
	require.True(t, os.IsNotExist(statErr), "data dir created before the refusal")

	var help bytes.Buffer
	_ = run([]string{"serve", "--help"}, &help, &help)
	for _, f := range []string{"auth", "oidc-issuer", "oidc-audience", "oidc-subject-claim", "oidc-groups-claim", "token-lifetime", "insecure-no-auth"} {
		require.Contains(t, help.String(), "-"+f, "--help documents --%s", f)
	}
}

// TestServeAuthNeedsSecretKey: Postgres mode has no key file to fall back on.
func TestServeAuthNeedsSecretKey(t *testing.T) {
	t.Setenv("CATALOG_SECRET_KEY", "")
	var errb bytes.Buffer
	err := run([]string{"serve", "--database-url", pgtest.NewDatabase(t), "--auth", "on"}, &errb, &errb)
	require.ErrorContains(t, err, "needs a secret key")
}

func TestPrincipalCLI(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testPrincipalCLI(t, "--data-dir", t.TempDir()) })
	t.Run("postgres", func(t *testing.T) { testPrincipalCLI(t, "--database-url", pgtest.NewDatabase(t)) })
}

var secretLine = regexp.MustCompile(`client secret: (\S+)`)

func testPrincipalCLI(t *testing.T, storage ...string) {
	cli := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(append(append([]string{"principal"}, args...), storage...), &out, &errb)
		return out.String(), err
	}
	out, err := cli("create", "spark")
	require.NoError(t, err)
	m := secretLine.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	first := m[1]
	require.Contains(t, out, "client id:     lh-")

	_, err = cli("create", "spark")
	require.ErrorContains(t, err, "Principal already exists: spark")
	_, err = cli("create")
	require.ErrorContains(t, err, "usage")

	out, err = cli("list")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "spark\tlh-"), out)
	require.Contains(t, out, "generation 1")
	require.NotContains(t, out, first, "list never shows secrets")

	out, err = cli("rotate", "spark")
	require.NoError(t, err)
	m = secretLine.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	require.NotEqual(t, first, m[1])
	out, _ = cli("list")
	require.Contains(t, out, "generation 2")

	_, err = cli("delete", "spark")
	require.NoError(t, err)
	_, err = cli("delete", "spark")
	require.ErrorContains(t, err, "Principal does not exist: spark")
	_, err = cli("frob", "x")
	require.Error(t, err)
}
