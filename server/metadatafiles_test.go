package server_test

import (
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
