package vending_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
)

// These tests run against a real S3 + STS that enforces session policies:
// SeaweedFS `weed mini`, started by scripts/test.sh (scripts/seaweed-start.sh).

const roleARN = "arn:aws:iam::000000000000:role/CatalogVendedRole"

func seaweed(t *testing.T) string {
	ep := os.Getenv("SEAWEED_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("CATALOG_TEST_REQUIRE_SEAWEED") == "1" {
			t.Fatal("SEAWEED_S3_ENDPOINT is not set but SeaweedFS is required")
		}
		t.Skip("needs SeaweedFS: SEAWEED_S3_ENDPOINT (make test starts it)")
	}
	return ep
}

func s3Client(ep string, c aws.Credentials) *s3.Client {
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), UsePathStyle: true,
		Credentials: awscreds.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)})
}

func code(err error) string {
	if err == nil {
		return "OK"
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return err.Error()
}

func denied(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, "%s must be denied", what)
	require.Contains(t, []string{"AccessDenied", "Forbidden"}, code(err), "%s: %v", what, err)
}

// vendor returns a vendor and the warehouse info of a SeaweedFS profile.
func vendor(t *testing.T, ep string) (*vending.S3, credentials.WarehouseInfo, *credentials.Sealer) {
	key := bytes.Repeat([]byte{7}, 32)
	sealer, err := credentials.NewSealer(key)
	require.NoError(t, err)
	raw, _ := json.Marshal(map[string]any{"type": "s3", "region": "us-east-1", "endpoint": ep, "path-style-access": true,
		"sts-endpoint": ep, "role-arn": roleARN, "access-key-id": "catalog", "secret-access-key": "catalogsecret",
		"credential-lifetime": "15m"})
	p, err := credentials.ParseS3Profile(raw, sealer)
	require.NoError(t, err)
	stored, _ := json.Marshal(p)
	require.NotContains(t, string(stored), "catalogsecret", "the secret is sealed")
	return vending.NewS3(sealer), credentials.WarehouseInfo{Name: "wh", Location: "s3://warehouse", StorageProfile: string(stored)}, sealer
}

func creds(t *testing.T, cfg map[string]string) aws.Credentials {
	return aws.Credentials{AccessKeyID: cfg["s3.access-key-id"], SecretAccessKey: cfg["s3.secret-access-key"], SessionToken: cfg["s3.session-token"]}
}

func TestVendedS3CredentialsAreScopedToTheTable(t *testing.T) {
	ep := seaweed(t)
	ctx := context.Background()
	admin := s3Client(ep, aws.Credentials{AccessKeyID: "admin", SecretAccessKey: "adminsecret"})
	for _, b := range []string{"warehouse", "warehouse-other"} {
		_, err := admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)})
		if err != nil && !strings.Contains(code(err), "BucketAlready") {
			require.NoError(t, err)
		}
	}
	// A fresh table name per run: SeaweedFS may be reused across runs.
	tbl := fmt.Sprintf("ns/t%d", time.Now().UnixNano())
	loc := "s3://warehouse/" + tbl
	for _, k := range []string{"ns/other/x", tbl + "2/x", "top.txt"} {
		_, err := admin.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(k), Body: strings.NewReader("x")})
		require.NoError(t, err)
	}
	_, err := admin.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("warehouse-other"), Key: aws.String(tbl + "/x"), Body: strings.NewReader("x")})
	require.NoError(t, err)

	v, wh, _ := vendor(t, ep)
	cfg, list, err := v.Vend(ctx, wh, loc, credentials.AccessReadWrite)
	require.NoError(t, err)
	require.Equal(t, "us-east-1", cfg["client.region"])
	require.Equal(t, ep, cfg["s3.endpoint"])
	require.Len(t, list, 1)
	require.Equal(t, loc, list[0].Prefix)
	exp := list[0].Config["s3.session-token-expires-at-ms"]
	require.NotEmpty(t, exp)
	rw := s3Client(ep, creds(t, cfg))

	// Allowed under the table.
	_, err = rw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "/data/a.parquet"), Body: strings.NewReader("hello")})
	require.NoError(t, err)
	got, err := rw.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "/data/a.parquet")})
	require.NoError(t, err)
	got.Body.Close()
	ls, err := rw.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("warehouse"), Prefix: aws.String(tbl + "/")})
	require.NoError(t, err)
	require.Len(t, ls.Contents, 1)
	mp, err := rw.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "/data/big")})
	require.NoError(t, err)
	part, err := rw.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "/data/big"),
		UploadId: mp.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(bytes.Repeat([]byte("z"), 5<<20))})
	require.NoError(t, err)
	_, err = rw.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "/data/big"),
		UploadId: mp.UploadId, MultipartUpload: &s3types.CompletedMultipartUpload{Parts: []s3types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
	require.NoError(t, err)
	_, err = rw.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "/data/a.parquet")})
	require.NoError(t, err)

	// Denied everywhere else.
	_, err = rw.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("warehouse"), Key: aws.String("ns/other/x")})
	denied(t, err, "read a sibling table")
	_, err = rw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("warehouse"), Key: aws.String("ns/other/y"), Body: strings.NewReader("x")})
	denied(t, err, "write a sibling table")
	_, err = rw.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "2/x")})
	denied(t, err, "read a look-alike prefix (table2)")
	_, err = rw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "2/y"), Body: strings.NewReader("x")})
	denied(t, err, "write a look-alike prefix (table2)")
	_, err = rw.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("warehouse"), Key: aws.String("top.txt")})
	denied(t, err, "read the bucket root")
	_, err = rw.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("warehouse")})
	denied(t, err, "list the whole bucket")
	_, err = rw.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("warehouse"), Prefix: aws.String("ns/")})
	denied(t, err, "list the namespace")
	_, err = rw.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("warehouse-other"), Key: aws.String(tbl + "/x")})
	denied(t, err, "the same key in another bucket")

	// The vended credentials cannot re-assume the role without the policy.
	c := creds(t, cfg)
	stsc := sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep),
		Credentials: awscreds.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)})
	_, err = stsc.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(roleARN), RoleSessionName: aws.String("escape"), DurationSeconds: aws.Int32(900)})
	require.Error(t, err, "role chaining must be denied")

	// Read-only credentials cannot write.
	rcfg, _, err := v.Vend(ctx, wh, loc, credentials.AccessRead)
	require.NoError(t, err)
	ro := s3Client(ep, creds(t, rcfg))
	_, err = ro.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "/ro"), Body: strings.NewReader("x")})
	denied(t, err, "write with read-only credentials")
	got, err = ro.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(tbl + "/data/big")})
	require.NoError(t, err)
	got.Body.Close()

	// Cached for half the lifetime: the same credentials come back.
	again, _, err := v.Vend(ctx, wh, loc, credentials.AccessReadWrite)
	require.NoError(t, err)
	require.Equal(t, cfg["s3.session-token"], again["s3.session-token"])
	require.WithinDuration(t, time.Now().Add(15*time.Minute), time.UnixMilli(mustInt(t, exp)), time.Minute)
}

func mustInt(t *testing.T, s string) int64 {
	var n int64
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9')
		n = n*10 + int64(c-'0')
	}
	return n
}
