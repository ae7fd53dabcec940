package v4read

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/storage"
)

// TestManifestSource: a manifest read for all its columns, or small, is
// read whole into memory; a large one read for some columns is read in
// ranges from the open file.
func TestManifestSource(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.parquet")
	data := bytes.Repeat([]byte("x"), wholeManifestBytes+1)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	io, err := storage.NewProvider().For(context.Background(), "file://"+path, nil)
	require.NoError(t, err)
	for _, whole := range []bool{true, false} {
		f, err := io.Open(context.Background(), "file://"+path)
		require.NoError(t, err)
		src, err := manifestSource(f, whole)
		require.NoError(t, err)
		if whole {
			br, ok := src.(*bytes.Reader)
			require.True(t, ok, "read whole")
			require.EqualValues(t, len(data), br.Size())
		} else {
			require.Same(t, f, src, "read in ranges")
		}
		require.NoError(t, f.Close())
	}
	small := filepath.Join(t.TempDir(), "s.parquet")
	require.NoError(t, os.WriteFile(small, []byte("PAR1small"), 0o644))
	f, err := io.Open(context.Background(), "file://"+small)
	require.NoError(t, err)
	defer f.Close()
	src, err := manifestSource(f, false)
	require.NoError(t, err)
	_, ok := src.(*bytes.Reader)
	require.True(t, ok, "a small manifest is read whole")
}
