package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWarehouseCommands(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	require.NoError(t, run([]string{"warehouse", "create", "lake", "--location", "file://" + filepath.Join(dir, "lake"), "--data-dir", dir}, &out, &errb))
	require.Contains(t, out.String(), "created warehouse lake")
	out.Reset()
	require.NoError(t, run([]string{"warehouse", "list", "--data-dir", dir}, &out, &errb))
	require.Contains(t, out.String(), "lake\tfile://")
	err := run([]string{"warehouse", "create", "lake", "--location", "file:///x", "--data-dir", dir}, &out, &errb)
	require.ErrorContains(t, err, "Warehouse already exists: lake")
	err = run([]string{"warehouse", "create", "bad", "--location", "ftp://x", "--data-dir", dir}, &out, &errb)
	require.ErrorContains(t, err, "scheme must be file, s3, gs, abfss or wasbs")
	require.NoError(t, run([]string{"migrate", "--data-dir", dir}, &out, &errb))
}

func TestHelpAndUnknown(t *testing.T) {
	var out, errb bytes.Buffer
	require.NoError(t, run([]string{"help"}, &out, &errb))
	for _, cmd := range []string{"serve", "migrate", "warehouse create", "manifest inspect"} {
		require.True(t, strings.Contains(out.String(), cmd), "help mentions %s", cmd)
	}
	require.Error(t, run([]string{"frobnicate"}, &out, &errb))
	require.Error(t, run(nil, &out, &errb))
}
