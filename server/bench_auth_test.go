package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/authn"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
)

// BenchmarkAuthCost measures loadTable and a set-properties commit with
// authentication and authorization off (mode=off), and on as `serve --auth
// on` runs them (mode=on: a built-in token, RBAC with its 1 s decision
// cache) and with the cache off (mode=on-nocache). scripts/bench.sh prints
// on/off ratios.
func BenchmarkAuthCost(b *testing.B) {
	for _, mode := range []string{"off", "on", "on-nocache"} {
		b.Run("mode="+mode, func(b *testing.B) {
			bd, token := authBenchServer(b, mode)
			var hdr []string
			if token != "" {
				hdr = []string{"Authorization", "Bearer " + token}
			}
			b.Run("op=load", func(b *testing.B) { benchGet(b, bd, "/v1/wh/namespaces/ns/tables/t", hdr...) })
			b.Run("op=commit", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					body := map[string]any{"requirements": []any{}, "updates": []any{
						map[string]any{"action": "set-properties", "updates": map[string]string{"n": fmt.Sprint(i)}}}}
					r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables/t", body, hdr...)
					if r.status != 200 {
						b.Fatalf("commit: %d %s", r.status, r.body)
					}
				}
			})
		})
	}
}

// authBenchServer starts a catalog with one table ns.t; for the "on" modes
// it returns a built-in principal's token granted read and write on ns.
func authBenchServer(b *testing.B, mode string) (*bundle, string) {
	st := openStore(b, benchBackend())
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := service.Options{Logger: quiet}
	var cfg server.Config
	var svc *service.Service
	if mode != "off" {
		builtin, err := authn.NewBuiltin(authn.BuiltinConfig{SecretKey: []byte(strings.Repeat("b", 32)),
			Generations: generationsFunc(func(ctx context.Context, name string) (string, int64, error) {
				return svc.Admin().PrincipalGeneration(ctx, name)
			})})
		require.NoError(b, err)
		rbac := access.NewRBAC(st)
		if mode == "on" {
			rbac = rbac.WithDecisionCache(time.Second)
		}
		opts.Authorizer, opts.Tokens = rbac, builtin
		cfg.Auth = authn.New(builtin, nil)
	}
	svc = service.New(st, storage.NewProvider(), opts)
	ctx := localCtx()
	_, err := svc.CreateWarehouse(ctx, "wh", "file://"+filepath.Join(b.TempDir(), "wh"), nil)
	require.NoError(b, err)
	cfg.DefaultWarehouse, cfg.Logger = "wh", quiet
	hs := httptest.NewServer(server.New(svc, cfg))
	b.Cleanup(hs.Close)
	bd := &bundle{url: hs.URL, store: st, client: hs.Client()}
	bd.client.Transport.(*http.Transport).MaxIdleConnsPerHost = 16
	var token string
	if mode != "off" {
		creds, err := svc.Admin().CreatePrincipal(ctx, "bench")
		require.NoError(b, err)
		_, err = svc.Admin().CreateRole(ctx, "rw", "")
		require.NoError(b, err)
		ns := service.Resource{Kind: service.ResourceNamespace, Warehouse: "wh", Namespace: []string{"ns"}}
		for _, p := range []service.Privilege{service.PrivNamespaceList, service.PrivTableList, service.PrivTableReadMetadata,
			service.PrivTableWriteMetadata, service.PrivTableCreate} {
			require.NoError(b, svc.Admin().GrantPrivilege(ctx, "rw", service.Grant{Privilege: p, On: ns}))
		}
		require.NoError(b, svc.Admin().AssignRole(ctx, "rw", service.Assignee{Kind: "builtin", Name: "bench"}))
		tok, err := svc.Admin().IssueToken(ctx, creds.ClientID, creds.ClientSecret)
		require.NoError(b, err)
		token = tok.AccessToken
	}
	_, err = svc.CreateNamespace(ctx, "wh", []string{"ns"}, nil)
	require.NoError(b, err)
	r := bd.doTB(b, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "t", "schema": rawJSON(testSchema)}, "Authorization", "Bearer "+token)
	require.Equal(b, 200, r.status, "%s", r.body)
	return bd, token
}
