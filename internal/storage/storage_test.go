package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRefusesRelativeAndDotDot: the catalog never opens a path that is not
// an absolute, ".."-free URI, whatever the operation.
func TestRefusesRelativeAndDotDot(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	if err := os.WriteFile(canary, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	io, err := NewProvider().For(ctx, "file://"+dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{canary, "canary", "file://" + dir + "/sub/../canary", "file://" + dir + "/%2e%2e/x"} {
		if _, err := io.Read(ctx, loc); !errors.Is(err, ErrRefused) {
			t.Errorf("Read(%q): %v", loc, err)
		}
		if err := io.Write(ctx, loc, []byte("y")); !errors.Is(err, ErrRefused) {
			t.Errorf("Write(%q): %v", loc, err)
		}
		if err := io.Delete(ctx, loc); !errors.Is(err, ErrRefused) {
			t.Errorf("Delete(%q): %v", loc, err)
		}
		if _, err := io.Exists(ctx, loc); !errors.Is(err, ErrRefused) {
			t.Errorf("Exists(%q): %v", loc, err)
		}
		if _, err := io.Open(ctx, loc); !errors.Is(err, ErrRefused) {
			t.Errorf("Open(%q): %v", loc, err)
		}
	}
	if _, err := NewProvider().For(ctx, "../x", nil); !errors.Is(err, ErrRefused) {
		t.Errorf("For(relative): %v", err)
	}
	if b, err := os.ReadFile(canary); err != nil || string(b) != "x" {
		t.Fatalf("canary changed: %q, %v", b, err)
	}
}

// TestDeleteNeverRemovesADirectory: an (empty) directory named as a file
// is refused; a missing file is not an error.
func TestDeleteNeverRemovesADirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	io, err := NewProvider().For(ctx, "file://"+dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := io.Delete(ctx, "file://"+empty); !errors.Is(err, ErrIsDirectory) {
		t.Fatalf("Delete(dir) = %v", err)
	}
	if _, err := os.Stat(empty); err != nil {
		t.Fatalf("directory removed: %v", err)
	}
	if err := io.Delete(ctx, "file://"+dir+"/missing"); err != nil {
		t.Fatalf("Delete(missing) = %v", err)
	}
	f := "file://" + dir + "/f"
	if err := io.Write(ctx, f, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := io.Delete(ctx, f); err != nil {
		t.Fatal(err)
	}
	if ok, err := io.Exists(ctx, f); err != nil || ok {
		t.Fatalf("file still there: %v, %v", ok, err)
	}
}

// TestProviderCacheIsBounded: IOs configured with ever new properties (a
// renewed SAS, a rotated secret) do not pile up in the cache.
func TestProviderCacheIsBounded(t *testing.T) {
	p := NewProvider()
	loc := "file://" + t.TempDir() + "/f"
	for i := range maxCachedIOs + 50 {
		_, err := p.For(context.Background(), loc, map[string]string{"adls.sas-token.x": strconv.Itoa(i)})
		require.NoError(t, err)
	}
	require.Len(t, p.cache, maxCachedIOs)
}
