package main

import (
	"bytes"
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
