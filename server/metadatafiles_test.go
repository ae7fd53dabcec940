package server_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDroppedMetadataFilesDeletedByJob: with
// write.metadata.delete-after-commit.enabled, each commit that drops
// files from the metadata log (write.metadata.previous-versions-max)
// enqueues their deletion in its transaction; a worker deletes exactly
// those, so the metadata directory ends with the log and the current file.
func TestDroppedMetadataFilesDeletedByJob(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		b.createNamespace(t, "ns")
		r := b.createTable(t, "ns", "t", map[string]any{"properties": map[string]string{
			"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "2"}})
		require.Equal(t, 200, r.status, "%s", r.body)
		dir := filepath.Join(strings.TrimPrefix(tableLocation(t, r), "file://"), "metadata")
		for i := range 5 {
			c := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", map[string]any{"updates": []any{
				map[string]any{"action": "set-properties", "updates": map[string]string{"n": string(rune('a' + i))}}}})
			require.Equal(t, 200, c.status, "%s", c.body)
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.metadata.json"))
		require.NoError(t, err)
		require.Len(t, files, 6, "nothing is deleted before a worker runs the jobs")
		require.Len(t, b.jobs(t, "?kind=delete-metadata-files").Jobs, 3, "the three commits that dropped a file")

		b.drainJobs(t)
		loaded := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil).json(t)
		want := []string{strings.TrimPrefix(loaded["metadata-location"].(string), "file://")}
		for _, e := range loaded["metadata"].(map[string]any)["metadata-log"].([]any) {
			want = append(want, strings.TrimPrefix(e.(map[string]any)["metadata-file"].(string), "file://"))
		}
		require.Len(t, want, 3)
		files, err = filepath.Glob(filepath.Join(dir, "*.metadata.json"))
		require.NoError(t, err)
		require.ElementsMatch(t, want, files)
	})
}

// TestDroppedMetadataFilesDeletedByJobV4: v4 snapshot commits (here
// /files) drop metadata files from the log too, and enqueue their
// deletion like any commit.
func TestDroppedMetadataFilesDeletedByJobV4(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		b.createNamespace(t, "ns")
		r := b.createTable(t, "ns", "t", map[string]any{"properties": map[string]string{"format-version": "4",
			"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "1"}})
		require.Equal(t, 200, r.status, "%s", r.body)
		tableLoc, _, _ := v4Meta(t, r)
		dir := strings.TrimPrefix(tableLoc, "file://")
		for i := range 4 {
			name := fmt.Sprintf("data/f%d.parquet", i)
			size := writeDataFile(t, filepath.Join(dir, name), int64(i))
			c := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t/files", map[string]any{"add-data-files": []any{
				map[string]any{"location": name, "file-format": "parquet", "record-count": 1, "file-size-in-bytes": size, "spec-id": 0}}})
			require.Equal(t, 200, c.status, "%s", c.body)
		}
		require.Len(t, b.jobs(t, "?kind=delete-metadata-files").Jobs, 3, "each commit after the first drops a file")
		b.drainJobs(t)
		files, err := filepath.Glob(filepath.Join(dir, "metadata", "*.metadata.json"))
		require.NoError(t, err)
		require.Len(t, files, 2, "the current file and one in the log: %v", files)
	})
}
