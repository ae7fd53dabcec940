package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "8388608": 8 << 20, "8MiB": 8 << 20, "64KiB": 64 << 10, "1GiB": 1 << 30} {
		got, err := parseSize(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "0", "-1", "8MB", "x", "1.5MiB", "99999999999GiB"} {
		_, err := parseSize(in)
		require.Error(t, err, in)
	}
	// Flag defaults are written the way they are typed, and read back.
	for n, want := range map[int64]string{8 << 20: "8MiB", 64 << 10: "64KiB", 1 << 30: "1GiB", 3 << 30: "3GiB", 65537: "65537", 1536: "1536", 1: "1"} {
		require.Equal(t, want, formatSize(n))
		back, err := parseSize(want)
		require.NoError(t, err, want)
		require.Equal(t, n, back, want)
	}
}

// TestServeRefusesUnboundedLimits: a zero limit would mean "no limit" to
// the http.Server, so serve refuses it before opening anything.
func TestServeRefusesUnboundedLimits(t *testing.T) {
	for _, args := range [][]string{
		{"--read-timeout", "0s"}, {"--read-header-timeout", "0s"}, {"--write-timeout", "0s"}, {"--idle-timeout", "0s"},
		{"--max-request-body", "0"}, {"--max-header-bytes", "0"},
	} {
		var errb bytes.Buffer
		err := run(append([]string{"serve", "--data-dir", t.TempDir()}, args...), &errb, &errb)
		require.Error(t, err, "%v", args)
	}
	var help bytes.Buffer
	_ = run([]string{"serve", "--help"}, &help, &help)
	for _, f := range []string{"max-request-body", "max-header-bytes", "read-header-timeout", "read-timeout", "write-timeout", "idle-timeout"} {
		require.Contains(t, help.String(), "-"+f, "--help documents --%s", f)
	}
}

// TestServeDBMaxConns: --db-max-conns is documented, and a negative flag or
// a malformed CATALOG_DB_MAX_CONNS stops serve before it opens anything.
func TestServeDBMaxConns(t *testing.T) {
	var help bytes.Buffer
	_ = run([]string{"serve", "--help"}, &help, &help)
	require.Contains(t, help.String(), "-db-max-conns")
	require.Contains(t, help.String(), "CATALOG_DB_MAX_CONNS")

	var errb bytes.Buffer
	err := run([]string{"serve", "--data-dir", t.TempDir(), "--db-max-conns", "-1"}, &errb, &errb)
	require.ErrorContains(t, err, "--db-max-conns")
	t.Setenv("CATALOG_DB_MAX_CONNS", "lots")
	err = run([]string{"serve", "--data-dir", t.TempDir()}, &errb, &errb)
	require.ErrorContains(t, err, "CATALOG_DB_MAX_CONNS")
}

func TestEnvInt(t *testing.T) {
	t.Setenv("X_TEST_INT", "")
	n, err := envInt("X_TEST_INT")
	require.NoError(t, err)
	require.Zero(t, n)
	t.Setenv("X_TEST_INT", " 24 ")
	n, err = envInt("X_TEST_INT")
	require.NoError(t, err)
	require.Equal(t, 24, n)
	for _, bad := range []string{"-3", "1.5", "x"} {
		t.Setenv("X_TEST_INT", bad)
		_, err = envInt("X_TEST_INT")
		require.Error(t, err, bad)
	}
}

// TestServeLogLevel: an unknown --log-level is refused before anything is
// opened, not silently taken as info.
func TestServeLogLevel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var errb bytes.Buffer
	err := run([]string{"serve", "--data-dir", dir, "--log-level", "verbose"}, &errb, &errb)
	require.ErrorContains(t, err, `--log-level "verbose": want debug, info, warn or error`)
	_, statErr := os.Stat(dir)
	require.True(t, os.IsNotExist(statErr), "data dir created before the refusal")
	for _, ok := range []string{"debug", "info", "warn", "error", "INFO"} {
		_, err := parseLogLevel(ok)
		require.NoError(t, err, ok)
	}
}

// TestServeWorkersFlags: --workers and --job-timeout are documented for
// serve and worker; a negative --workers, --workers 0 for `catalog worker`
// (it would do nothing), a zero --job-timeout or a malformed
// CATALOG_WORKERS stop the command before it opens anything.
func TestServeWorkersFlags(t *testing.T) {
	for _, cmd := range []string{"serve", "worker"} {
		var help bytes.Buffer
		_ = run([]string{cmd, "--help"}, &help, &help)
		for _, f := range []string{"-workers", "CATALOG_WORKERS", "-job-timeout", "CATALOG_JOB_TIMEOUT"} {
			require.Contains(t, help.String(), f, "%s --help", cmd)
		}
	}
	var errb bytes.Buffer
	for _, args := range [][]string{
		{"serve", "--workers", "-1"}, {"worker", "--workers", "0"}, {"serve", "--job-timeout", "0s"},
	} {
		err := run(append(args, "--data-dir", t.TempDir()), &errb, &errb)
		require.Error(t, err, "%v", args)
	}
	t.Setenv("CATALOG_WORKERS", "many")
	require.ErrorContains(t, run([]string{"serve", "--data-dir", t.TempDir()}, &errb, &errb), "CATALOG_WORKERS")
}
