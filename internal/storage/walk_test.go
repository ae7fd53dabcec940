package storage

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWalkLocal: a walk reports regular files under the root with their
// URIs, descends into directories, and neither reports nor follows a
// symbolic link (to a file or a directory outside the root).
func TestWalkLocal(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "data", "p=1"), 0o755))
	for _, f := range []string{"data/a.parquet", "data/p=1/b.parquet", "metadata/00001.metadata.json"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "data", "link.parquet")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "data", "linkdir")))
	var got []string
	err := NewProvider().Walk(context.Background(), "file://"+root, nil, func(l Listed) error {
		require.EqualValues(t, 1, l.Size)
		require.False(t, l.ModTime.IsZero())
		got = append(got, l.Location)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(got)
	require.Equal(t, []string{"file://" + root + "/data/a.parquet", "file://" + root + "/data/p=1/b.parquet",
		"file://" + root + "/metadata/00001.metadata.json"}, got)

	require.NoError(t, NewProvider().Walk(context.Background(), "file://"+root+"/missing", nil, func(Listed) error {
		t.Fatal("a missing root has no files")
		return nil
	}))
}
