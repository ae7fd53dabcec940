package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/parquettest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store/sqlstore"
)

// TestReadCLIOnS3: a v4 table on SeaweedFS behind a storage profile; the
// CLI gets nothing but the catalog URI and reads the stitched rows with
// the credentials the catalog vends (the server itself never shares its
// profile's keys).
func TestReadCLIOnS3(t *testing.T) {
	ep := os.Getenv("SEAWEED_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("CATALOG_TEST_REQUIRE_SEAWEED") == "1" {
			t.Fatal("SEAWEED_S3_ENDPOINT is not set but SeaweedFS is required")
		}
		t.Skip("needs SeaweedFS: SEAWEED_S3_ENDPOINT (make test starts it)")
	}
	ctx := context.Background()
	admin := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), UsePathStyle: true,
		Credentials: awscreds.NewStaticCredentialsProvider("admin", "adminsecret", "")})
	// The vended role may use bucket "warehouse" (integration/seaweed/iam.json).
	if _, err := admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("warehouse")}); err != nil && !strings.Contains(err.Error(), "BucketAlready") {
		require.NoError(t, err)
	}
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "catalog.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Sealer: sealer, Credentials: vending.New(sealer)})
	_, err = svc.CreateWarehouse(ctx, "wh", "s3://warehouse/readcli-"+strconv.FormatInt(time.Now().UnixNano(), 36), nil)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet}))
	t.Cleanup(hs.Close)
	call := func(method, path string, body any) map[string]any {
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, hs.URL+path, bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Iceberg-Column-Files", "true")
		resp, err := hs.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		require.Equal(t, 200, resp.StatusCode, "%s %s: %s", method, path, out)
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		return m
	}
	call("PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "s3", "region": "us-east-1",
		"endpoint": ep, "path-style-access": true, "sts-endpoint": ep, "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
		"access-key-id": "catalog", "secret-access-key": "catalogsecret"})
	call("POST", "/v1/wh/namespaces", map[string]any{"namespace": []string{"ns"}})
	res := call("POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "properties": map[string]string{"format-version": "4"},
		"schema": json.RawMessage(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"k","type":"long","required":true},{"id":2,"name":"v","type":"long","required":false}]}`)})
	loc := res["metadata"].(map[string]any)["location"].(string)

	put := func(name string, fields []arrow.Field, fill func(b *array.RecordBuilder)) int64 {
		local := filepath.Join(t.TempDir(), name)
		size := parquettest.Write(t, local, fields, fill)
		data, err := os.ReadFile(local)
		require.NoError(t, err)
		key := strings.TrimPrefix(loc, "s3://warehouse/") + "/data/" + name
		_, err = admin.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(key), Body: bytes.NewReader(data)})
		require.NoError(t, err)
		return size
	}
	size := put("base.parquet", []arrow.Field{longField("k", "1", false), longField("v", "2", true)}, func(b *array.RecordBuilder) {
		for i := 0; i < 50; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Int64Builder).Append(int64(i))
		}
	})
	call("POST", "/v1/wh/namespaces/ns/tables/t/files", map[string]any{"add-data-files": []any{map[string]any{
		"location": "data/base.parquet", "file-format": "parquet", "record-count": 50, "file-size-in-bytes": size}}})
	csize := put("v.parquet", []arrow.Field{longField("v", "2", true)}, func(b *array.RecordBuilder) {
		for i := 0; i < 50; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(-i))
		}
	})
	call("POST", "/v1/wh/namespaces/ns/tables/t/column-files", map[string]any{"column-files": []any{map[string]any{
		"data-file": loc + "/data/base.parquet", "location": "data/v.parquet", "file-format": "parquet", "field-ids": []int{2},
		"file-size-in-bytes": csize, "record-count": 50}}})

	var out, errb bytes.Buffer
	require.NoError(t, run([]string{"read", "--uri", hs.URL, "--warehouse", "wh", "--filter", `{"type":"lt","term":"v","value":-45}`, "ns.t"}, &out, &errb), errb.String())
	rows := jsonlRows(t, out.Bytes())
	require.Len(t, rows, 4, out.String())
	for _, r := range rows {
		require.Equal(t, -num(t, r["k"]), num(t, r["v"]), "v from the column file on S3")
	}

}
