package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"
)

// seaweedS3 returns the endpoint of the SeaweedFS S3 that scripts/test.sh
// starts (scripts/seaweed-start.sh), with its "warehouse" bucket created by
// the admin identity of integration/seaweed/iam.json, and an admin client.
// Without one the test is skipped, or fails under
// CATALOG_TEST_REQUIRE_SEAWEED=1.
func seaweedS3(t *testing.T) (string, *s3.Client) {
	t.Helper()
	ep := os.Getenv("SEAWEED_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("CATALOG_TEST_REQUIRE_SEAWEED") == "1" {
			t.Fatal("SEAWEED_S3_ENDPOINT is not set but SeaweedFS is required")
		}
		t.Skip("needs SeaweedFS: SEAWEED_S3_ENDPOINT (make test starts it)")
	}
	admin := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), UsePathStyle: true,
		Credentials: awscreds.NewStaticCredentialsProvider("admin", "adminsecret", "")})
	_, err := admin.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("warehouse")})
	var owned *s3types.BucketAlreadyOwnedByYou
	var exists *s3types.BucketAlreadyExists
	if err != nil && !errors.As(err, &owned) && !errors.As(err, &exists) && !strings.Contains(err.Error(), "BucketAlready") {
		require.NoError(t, err)
	}
	return ep, admin
}

// TestWalkS3: on a real S3 (SeaweedFS) a walk of a table location lists
// every object under it, with the size and last-modified time S3 reports,
// and nothing else: not the directory markers (keys ending in "/", an
// empty application/x-directory object), not a sibling table whose name
// extends this one's ("t2"), not an object named like the location itself
// or sharing its prefix without the "/" ("t.parquet"). An empty file is a
// file. A trailing "/" on the root changes nothing; a missing root walks
// nothing; fn's error stops the walk and is returned.
func TestWalkS3(t *testing.T) {
	ep, admin := seaweedS3(t)
	ctx := context.Background()
	base := fmt.Sprintf("walk-%d/ns", time.Now().UnixNano())
	t.Cleanup(func() { emptyPrefix(t, admin, strings.TrimSuffix(base, "/ns")+"/") })
	put := func(key, contentType string, size int) {
		in := &s3.PutObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(base + "/" + key),
			Body: bytes.NewReader(bytes.Repeat([]byte("x"), size))}
		if contentType != "" {
			in.ContentType = aws.String(contentType)
		}
		_, err := admin.PutObject(ctx, in)
		require.NoError(t, err, key)
	}
	files := map[string]int{ // key under base: size
		"t/data/a.parquet":                 3,
		"t/data/p=1/b.parquet":             5,
		"t/data/p=1/p=2/deep.parquet":      7,
		"t/metadata/00001-x.metadata.json": 11,
		"t/metadata/snap-1.avro":           13,
		"t/data/_SUCCESS":                  0,
		"t/data/weird name %41+é.parquet":  2,
	}
	before := time.Now().Add(-2 * time.Second)
	for k, n := range files {
		put(k, "", n)
	}
	for _, k := range []string{"t/", "t/data/", "t/data/p=1/", "t/metadata/"} {
		put(k, "", 0) // directory markers, as the S3 console and Hadoop write them
	}
	put("t/dir-object", "application/x-directory", 0) // s3fs's marker, without a slash
	for _, k := range []string{"t2/data/sibling.parquet", "t2/metadata/00001-y.metadata.json", "t.parquet", "t", "other/x.parquet"} {
		put(k, "", 1)
	}
	after := time.Now().Add(2 * time.Second)

	props := map[string]string{"s3.endpoint": ep, "s3.region": "us-east-1", "s3.access-key-id": "catalog",
		"s3.secret-access-key": "catalogsecret", "s3.force-virtual-addressing": "false"}
	p := NewProvider()
	root := "s3://warehouse/" + base + "/t"
	walk := func(root string) map[string]Listed {
		got := map[string]Listed{}
		require.NoError(t, p.Walk(ctx, root, props, func(l Listed) error {
			require.NotContains(t, got, l.Location, "listed twice")
			got[l.Location] = l
			return nil
		}))
		return got
	}
	got := walk(root)
	want := map[string]int64{}
	for k, n := range files {
		want["s3://warehouse/"+base+"/"+k] = int64(n)
	}
	sizes := map[string]int64{}
	for loc, l := range got {
		sizes[loc] = l.Size
		require.True(t, l.ModTime.After(before) && l.ModTime.Before(after), "%s: modified %v, written between %v and %v", loc, l.ModTime, before, after)
		head, err := admin.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(strings.TrimPrefix(loc, "s3://warehouse/"))})
		require.NoError(t, err, loc)
		require.WithinDuration(t, *head.LastModified, l.ModTime, time.Second, loc)
	}
	require.Equal(t, want, sizes)

	require.Equal(t, got, walk(root+"/"), "a trailing slash on the root")
	require.Empty(t, walk("s3://warehouse/"+base+"/missing"))
	require.Len(t, walk("s3://warehouse/"+base+"/t2"), 2, "the sibling is a table of its own")

	stop := errors.New("stop")
	n := 0
	err := p.Walk(ctx, root, props, func(Listed) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, p.Walk(cancelled, root, props, func(Listed) error { return nil }), context.Canceled)
}

// emptyPrefix deletes the test's objects under prefix in "warehouse".
func emptyPrefix(t *testing.T, admin *s3.Client, prefix string) {
	ctx := context.Background()
	pages := s3.NewListObjectsV2Paginator(admin, &s3.ListObjectsV2Input{Bucket: aws.String("warehouse"), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Logf("cleaning up %s: %v", prefix, err)
			return
		}
		for _, o := range page.Contents {
			if _, err := admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("warehouse"), Key: o.Key}); err != nil {
				t.Logf("cleaning up %s: %v", *o.Key, err)
			}
		}
	}
}
