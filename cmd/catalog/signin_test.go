package main

import (
	"bytes"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSignInFlags: the sign-in limits and the session cap are documented
// in --help, read from the environment, and refused when they would
// disable a bound, before serve opens anything.
func TestSignInFlags(t *testing.T) {
	var help bytes.Buffer
	_ = run([]string{"serve", "--help"}, &help, &help)
	for _, f := range []string{"signin-concurrency", "signin-wait", "signin-max-failures", "signin-source-max-failures",
		"signin-failure-window", "signin-lockout", "signin-max-lockout", "max-session-age"} {
		require.Contains(t, help.String(), "-"+f, "--help documents --%s", f)
	}
	require.Contains(t, help.String(), "CATALOG_MAX_SESSION_AGE")

	for _, args := range [][]string{
		{"--signin-concurrency", "0"}, {"--signin-wait", "0s"}, {"--signin-wait", "2m"},
		{"--signin-max-failures", "0"}, {"--signin-source-max-failures", "-1"},
		{"--signin-lockout", "0s"}, {"--signin-lockout", "10s", "--signin-max-lockout", "5s"},
		{"--signin-failure-window", "0s"}, {"--max-session-age", "30s"},
	} {
		var errb bytes.Buffer
		err := run(append([]string{"serve", "--data-dir", t.TempDir()}, args...), &errb, &errb)
		require.ErrorContains(t, err, args[0], "%v", args)
	}
	t.Setenv("CATALOG_SIGNIN_MAX_FAILURES", "many")
	var errb bytes.Buffer
	require.ErrorContains(t, run([]string{"serve", "--data-dir", t.TempDir()}, &errb, &errb), "CATALOG_SIGNIN_MAX_FAILURES")

	t.Setenv("CATALOG_SIGNIN_MAX_FAILURES", "3")
	t.Setenv("CATALOG_SIGNIN_SOURCE_MAX_FAILURES", "0")
	t.Setenv("CATALOG_MAX_SESSION_AGE", "2h")
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	sf := registerSignInFlags(fs)
	require.NoError(t, fs.Parse([]string{"--signin-concurrency", "7"}))
	require.NoError(t, sf.check())
	require.Equal(t, 3, sf.cfg.MaxFailures)
	require.Equal(t, -1, sf.cfg.SourceMaxFailures, "0 turns the per-address limit off")
	require.Equal(t, 7, sf.cfg.Concurrency)
	require.Equal(t, 2*time.Hour, sf.maxSessionAge)
}
