package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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

// BenchmarkPlanV4Storage plans (POST .../plan, X-Iceberg-Column-Files:
// true) a v4 table of N base files appended in one /files commit, each
// then given a column file for v in one /column-files commit, on file://
// and, with SEAWEED_S3_ENDPOINT set, on S3 (SeaweedFS behind a storage
// profile, reached through a counting proxy). It reports the object-store
// requests per plan (s3-requests/op): planning must not cost a storage
// round trip per planned file.
func BenchmarkPlanV4Storage(b *testing.B) {
	stores := []string{"file"}
	if os.Getenv("SEAWEED_S3_ENDPOINT") != "" {
		stores = append(stores, "s3")
	}
	for _, kind := range stores {
		for _, cache := range []string{"warm", "cold"} {
			for _, n := range []int{1, 5, 10} {
				b.Run(fmt.Sprintf("%s/%s/files=%d", kind, cache, n), func(b *testing.B) {
					fx := newPlanStorageFixture(b, kind)
					fx.fill(b, n)
					body := []byte(`{}`)
					fx.requests.Store(0)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if cache == "cold" {
							// A replica that has not read this table's manifests yet.
							b.StopTimer()
							fx.replica(b)
							b.StartTimer()
						}
						out := fx.call(b, "POST", "/v1/wh/namespaces/ns/tables/t/plan", body)
						if i == 0 {
							var res struct {
								Tasks []struct {
									DataFile struct {
										ColumnFiles []json.RawMessage `json:"column-files"`
									} `json:"data-file"`
								} `json:"file-scan-tasks"`
							}
							require.NoError(b, json.Unmarshal(out, &res))
							require.Len(b, res.Tasks, n)
							for _, t := range res.Tasks {
								if os.Getenv("PLAN_BENCH_COLUMN_COMMITS") != "none" {
									require.Len(b, t.DataFile.ColumnFiles, 1)
								}
							}
						}
					}
					b.StopTimer()
					b.ReportMetric(float64(fx.requests.Load())/float64(b.N), "s3-requests/op")
				})
			}
		}
	}
}

type planStorageFixture struct {
	kind     string
	url      string
	client   *http.Client
	loc      string // table location
	admin    *s3.Client
	store    *sqlstore.Store
	files    *storage.Provider
	opts     service.Options
	srv      *httptest.Server
	requests atomic.Int64 // S3 requests through the proxy
}

func newPlanStorageFixture(b *testing.B, kind string) *planStorageFixture {
	ctx := context.Background()
	fx := &planStorageFixture{kind: kind}
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "catalog.db"))
	require.NoError(b, err)
	b.Cleanup(st.Close)
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{7}, 32))
	require.NoError(b, err)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	fx.store, fx.files = st, storage.NewProvider()
	fx.opts = service.Options{Logger: quiet, Sealer: sealer, Credentials: vending.New(sealer)}
	svc := service.New(st, fx.files, fx.opts)
	whLoc := "file://" + b.TempDir()
	if kind == "s3" {
		whLoc = "s3://warehouse/planbench-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	_, err = svc.CreateWarehouse(ctx, "wh", whLoc, nil)
	require.NoError(b, err)
	fx.serve(b, svc)
	if kind == "s3" {
		ep := os.Getenv("SEAWEED_S3_ENDPOINT")
		target, err := url.Parse(ep)
		require.NoError(b, err)
		rp := httputil.NewSingleHostReverseProxy(target)
		var logf *os.File
		if p := os.Getenv("PLAN_BENCH_LOG"); p != "" {
			logf, err = os.Create(p)
			require.NoError(b, err)
			b.Cleanup(func() { logf.Close() })
		}
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fx.requests.Add(1)
			if logf != nil {
				fmt.Fprintf(logf, "%d %s %s %s\n", fx.requests.Load(), r.Method, r.URL.Path, r.Header.Get("Range"))
			}
			rp.ServeHTTP(w, r)
		}))
		b.Cleanup(proxy.Close)
		fx.admin = s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep), UsePathStyle: true,
			Credentials: awscreds.NewStaticCredentialsProvider("admin", "adminsecret", "")})
		if _, err := fx.admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("warehouse")}); err != nil && !strings.Contains(err.Error(), "BucketAlready") {
			require.NoError(b, err)
		}
		fx.call(b, "PUT", "/management/v1/warehouses/wh/storage-profile", mustJSON(map[string]any{"type": "s3", "region": "us-east-1",
			"endpoint": proxy.URL, "path-style-access": true, "sts-endpoint": proxy.URL, "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
			"access-key-id": "catalog", "secret-access-key": catalogSecret}))
	}
	fx.call(b, "POST", "/v1/wh/namespaces", mustJSON(map[string]any{"namespace": []string{"ns"}}))
	out := fx.call(b, "POST", "/v1/wh/namespaces/ns/tables", mustJSON(map[string]any{"name": "t", "properties": map[string]string{"format-version": "4"},
		"schema": json.RawMessage(`{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"k","type":"long","required":true},{"id":2,"name":"v","type":"long","required":false}]}`)}))
	var res struct {
		Metadata struct {
			Location string `json:"location"`
		} `json:"metadata"`
	}
	require.NoError(b, json.Unmarshal(out, &res))
	fx.loc = res.Metadata.Location
	return fx
}

// serve puts svc behind the fixture's URL.
func (fx *planStorageFixture) serve(b *testing.B, svc *service.Service) {
	if fx.srv != nil {
		fx.srv.Close()
	}
	fx.srv = httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: fx.opts.Logger}))
	b.Cleanup(fx.srv.Close)
	fx.url, fx.client = fx.srv.URL, fx.srv.Client()
}

// replica serves the table from a new service over the same store and
// storage provider (object-store clients reused, manifest caches empty).
func (fx *planStorageFixture) replica(b *testing.B) {
	fx.serve(b, service.New(fx.store, fx.files, fx.opts))
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

func (fx *planStorageFixture) call(b *testing.B, method, path string, body []byte) []byte {
	req, err := http.NewRequest(method, fx.url+path, bytes.NewReader(body))
	require.NoError(b, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Iceberg-Column-Files", "true")
	resp, err := fx.client.Do(req)
	require.NoError(b, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(b, err)
	require.Equal(b, 200, resp.StatusCode, "%s %s: %s", method, path, out)
	return out
}

// put writes a Parquet file at the table-relative name and returns its size.
func (fx *planStorageFixture) put(b *testing.B, name string, fields []arrow.Field, fill func(*array.RecordBuilder)) int64 {
	if fx.kind == "file" {
		return parquettest.Write(b, filepath.Join(strings.TrimPrefix(fx.loc, "file://"), name), fields, fill)
	}
	local := filepath.Join(b.TempDir(), filepath.Base(name))
	size := parquettest.Write(b, local, fields, fill)
	data, err := os.ReadFile(local)
	require.NoError(b, err)
	key := strings.TrimPrefix(fx.loc, "s3://warehouse/") + "/" + name
	_, err = fx.admin.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("warehouse"), Key: aws.String(key), Body: bytes.NewReader(data)})
	require.NoError(b, err)
	return size
}

// fill appends n base files in one commit, then gives each a column file
// for v in one column-files commit.
func (fx *planStorageFixture) fill(b *testing.B, n int) {
	long := func(name, id string, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: nullable, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{id})}
	}
	const rows = 50
	var adds, cols []any
	for f := 0; f < n; f++ {
		name := fmt.Sprintf("data/base-%d.parquet", f)
		size := fx.put(b, name, []arrow.Field{long("k", "1", false), long("v", "2", true)}, func(rb *array.RecordBuilder) {
			for i := 0; i < rows; i++ {
				rb.Field(0).(*array.Int64Builder).Append(int64(f*rows + i))
				rb.Field(1).(*array.Int64Builder).Append(int64(i))
			}
		})
		adds = append(adds, map[string]any{"location": name, "file-format": "parquet", "record-count": rows, "file-size-in-bytes": size})
		cname := fmt.Sprintf("data/v-%d.parquet", f)
		csize := fx.put(b, cname, []arrow.Field{long("v", "2", true)}, func(rb *array.RecordBuilder) {
			for i := 0; i < rows; i++ {
				rb.Field(0).(*array.Int64Builder).Append(int64(-i))
			}
		})
		cols = append(cols, map[string]any{"data-file": fx.loc + "/" + name, "location": cname, "file-format": "parquet",
			"field-ids": []int{2}, "file-size-in-bytes": csize, "record-count": rows})
	}
	if os.Getenv("PLAN_BENCH_APPENDS") == "per-file" {
		for _, a := range adds {
			fx.call(b, "POST", "/v1/wh/namespaces/ns/tables/t/files", mustJSON(map[string]any{"add-data-files": []any{a}}))
		}
	} else {
		fx.call(b, "POST", "/v1/wh/namespaces/ns/tables/t/files", mustJSON(map[string]any{"add-data-files": adds}))
	}
	switch os.Getenv("PLAN_BENCH_COLUMN_COMMITS") {
	case "none":
		return
	case "per-file":
		for _, c := range cols {
			fx.call(b, "POST", "/v1/wh/namespaces/ns/tables/t/column-files", mustJSON(map[string]any{"column-files": []any{c}}))
		}
		return
	}
	fx.call(b, "POST", "/v1/wh/namespaces/ns/tables/t/column-files", mustJSON(map[string]any{"column-files": cols}))
}
