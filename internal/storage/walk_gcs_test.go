package storage

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/stretchr/testify/require"
)

// TestWalkGCS: on GCS (fake-gcs-server, in process, through the same
// gocloud bucket iceberg-go opens for gs://) a walk of a table location
// lists every object under it with its size and update time, and skips
// directory markers, a sibling table "t2", objects sharing the location's
// name without its "/", and other tables.
func TestWalkGCS(t *testing.T) {
	day := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	obj := func(name, contentType string, size int, updated time.Time) fakestorage.Object {
		return fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "lake", Name: name, ContentType: contentType,
			Created: updated, Updated: updated}, Content: bytes.Repeat([]byte("x"), size)}
	}
	files := map[string]int{
		"ns/t/data/a.parquet":                 3,
		"ns/t/data/p=1/b.parquet":             5,
		"ns/t/metadata/00001-x.metadata.json": 11,
		"ns/t/data/_SUCCESS":                  0,
	}
	var initial []fakestorage.Object
	i := 0
	for name, size := range files {
		i++
		initial = append(initial, obj(name, "application/octet-stream", size, day.Add(time.Duration(i)*time.Hour)))
	}
	for _, name := range []string{"ns/t/", "ns/t/data/", "ns/t/data/p=1/"} {
		initial = append(initial, obj(name, "application/x-www-form-urlencoded;charset=UTF-8", 0, day)) // the console's folders
	}
	initial = append(initial, obj("ns/t/dir-object", "application/x-directory; charset=binary", 0, day))
	for _, name := range []string{"ns/t2/data/sibling.parquet", "ns/t.parquet", "ns/t", "ns/other/x.parquet"} {
		initial = append(initial, obj(name, "application/octet-stream", 1, day))
	}
	gcs, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, InitialObjects: initial})
	require.NoError(t, err)
	srv := httptest.NewServer(gcs.HTTPHandler())
	defer srv.Close()
	props := map[string]string{"gcs.service.host": srv.URL + "/storage/v1/", "gcs.no-auth": "true"}

	got := map[string]Listed{}
	require.NoError(t, NewProvider().Walk(context.Background(), "gs://lake/ns/t", props, func(l Listed) error {
		got[l.Location] = l
		return nil
	}))
	want := map[string]Listed{}
	for _, o := range initial {
		if size, ok := files[o.Name]; ok {
			want["gs://lake/"+o.Name] = Listed{Location: "gs://lake/" + o.Name, Size: int64(size), ModTime: o.Updated}
		}
	}
	require.Len(t, got, len(want))
	for loc, w := range want {
		require.Contains(t, got, loc)
		require.Equal(t, w.Size, got[loc].Size, loc)
		require.True(t, w.ModTime.Equal(got[loc].ModTime), "%s: modified %v, want %v", loc, got[loc].ModTime, w.ModTime)
	}
}
