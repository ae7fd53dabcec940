package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
)

// TestRemoveOrphanFilesS3: orphan removal on a SeaweedFS warehouse (a
// storage profile, the table written by iceberg-go with vended
// credentials). It lists every object of the table (regression: none, as
// gocloud reports objects as irregular files), finds the two unreferenced
// old ones and deletes exactly them, and keeps the referenced files (the
// table reads as before), a younger unreferenced file, a directory marker,
// a sibling table whose name extends this one's, an object sharing the
// location's name without its "/" and one elsewhere in the namespace.
//
// S3 dates objects itself, so the window is a moment between the old and
// the young writes, and the service's clock runs two hours ahead for the
// removal, as the window must end at least an hour ago.
func TestRemoveOrphanFilesS3(t *testing.T) {
	ep := seaweedEndpoint(t)
	ctx := context.Background()
	ensureBucket(t, ep, "warehouse")
	admin := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), UsePathStyle: true,
		Credentials: awscreds.NewStaticCredentialsProvider("admin", "adminsecret", "")})

	st := openStore(t, "sqlite")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{9}, 32))
	require.NoError(t, err)
	var ahead atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Sealer: sealer,
		Credentials: vending.New(sealer), Clock: clock})
	_, err = svc.CreateWarehouse(ctx, "wh", "s3://warehouse", nil)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet}))
	t.Cleanup(hs.Close)
	b := &bundle{url: hs.URL, store: st, client: hs.Client(), svc: svc}
	r := b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "s3", "region": "us-east-1",
		"endpoint": ep, "path-style-access": true, "sts-endpoint": ep, "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
		"access-key-id": "catalog", "secret-access-key": catalogSecret})
	require.Equal(t, 200, r.status, "%s", r.body)

	name := fmt.Sprintf("orphans%d", time.Now().UnixNano())
	tbl := goTable(t, b, "ns", name, []int64{1, 2, 3}, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	loc := tbl.Location()
	require.True(t, strings.HasPrefix(loc, "s3://warehouse/ns/"+name), loc)
	key := strings.TrimPrefix(loc, "s3://warehouse/")
	t.Cleanup(func() {
		for _, prefix := range []string{key, "ns/" + name + "-canary"} {
			pages := s3.NewListObjectsV2Paginator(admin, &s3.ListObjectsV2Input{Bucket: aws.String("warehouse"), Prefix: aws.String(prefix)})
			for pages.HasMorePages() {
				page, err := pages.NextPage(ctx)
				if err != nil {
					return
				}
				for _, o := range page.Contents {
					_, _ = admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("warehouse"), Key: o.Key})
				}
			}
		}
	})
	put := func(k string) string {
		_, err := admin.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(k), Body: strings.NewReader("x")})
		require.NoError(t, err, k)
		return k
	}
	exists := func(k string) bool {
		_, err := admin.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(k)})
		var missing *s3types.NotFound
		if errors.As(err, &missing) {
			return false
		}
		require.NoError(t, err, k)
		return true
	}
	orphanData := put(key + "/data/aborted-writer.parquet")
	orphanMeta := put(key + "/metadata/killed-job-m0.avro")
	kept := []string{
		put(key + "2/data/sibling.parquet"),     // a table named like this one plus "2"
		put(key + ".parquet"),                   // this location's name without its "/"
		put("ns/" + name + "-canary/x.parquet"), // elsewhere in the namespace
		put(key + "/data/"),                     // a directory marker
	}
	// S3 dates objects to the second: the window ends between the seconds
	// of the old writes and of the young one.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	olderThan := time.Now()
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	young := put(key + "/data/being-written.parquet")
	kept = append(kept, young)

	var tableObjects int
	pages := s3.NewListObjectsV2Paginator(admin, &s3.ListObjectsV2Input{Bucket: aws.String("warehouse"), Prefix: aws.String(key + "/")})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		require.NoError(t, err)
		for _, o := range page.Contents {
			if !strings.HasSuffix(*o.Key, "/") {
				tableObjects++
			}
		}
	}
	require.Greater(t, tableObjects, 6, "metadata files, a manifest list, a manifest, a data file, the two orphans and the young file")

	ahead.Store(int64(2 * time.Hour))
	path := fmt.Sprintf("/management/v1/warehouses/wh/namespaces/ns/tables/%s/remove-orphan-files", name)
	r = b.do(t, "POST", path, map[string]any{"older-than": olderThan})
	require.Equal(t, 200, r.status, "%s", r.body)
	var dry orphanReport
	require.NoError(t, json.Unmarshal(r.body, &dry))
	require.True(t, dry.DryRun)
	require.ElementsMatch(t, []string{"data/aborted-writer.parquet", "metadata/killed-job-m0.avro"}, dry.Orphans)
	require.Equal(t, tableObjects, dry.Listed, "every object under the table, the young one too, no marker")
	require.True(t, exists(orphanData))

	r = b.do(t, "POST", path, map[string]any{"older-than": olderThan, "dry-run": false})
	require.Equal(t, 200, r.status, "%s", r.body)
	var done orphanReport
	require.NoError(t, json.Unmarshal(r.body, &done))
	require.ElementsMatch(t, dry.Orphans, done.Orphans)
	require.Equal(t, 2, done.Deleted)
	require.Zero(t, done.Failed)
	require.False(t, exists(orphanData))
	require.False(t, exists(orphanMeta))
	for _, k := range kept {
		require.True(t, exists(k), "%s must stay", k)
	}
	ahead.Store(0)

	loaded, err := restCatalog(t, b).LoadTable(ctx, []string{"ns", name})
	require.NoError(t, err)
	out, err := loaded.Scan().ToArrowTable(ctx)
	require.NoError(t, err)
	defer out.Release()
	require.EqualValues(t, 3, out.NumRows(), "every referenced file is still there")
}
