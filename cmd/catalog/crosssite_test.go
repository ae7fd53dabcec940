package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeCrossSiteFlags: --allowed-origins and --allowed-hosts are
// documented, and a malformed entry is refused in one line before anything
// is opened or created.
func TestServeCrossSiteFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--allowed-origins", "console.example"}, {"--allowed-origins", "https://ok.example,ftp://x"},
		{"--allowed-hosts", "http://catalog.example"}, {"--allowed-hosts", "*.example.com"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		var errb bytes.Buffer
		err := run(append([]string{"serve", "--data-dir", dir}, args...), &errb, &errb)
		require.ErrorContains(t, err, args[0], "%v", args)
		require.NotContains(t, err.Error(), "\n")
		_, statErr := os.Stat(dir)
		require.True(t, os.IsNotExist(statErr), "data dir created before the refusal of %v", args)
	}
	var help bytes.Buffer
	_ = run([]string{"serve", "--help"}, &help, &help)
	for _, f := range []string{"allowed-origins", "allowed-hosts", "CATALOG_ALLOWED_ORIGINS", "CATALOG_ALLOWED_HOSTS"} {
		require.Contains(t, help.String(), f)
	}
}
