package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/pgtest"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore"
)

// atRest opens a store of backend and returns it with a function that
// dumps every row of every table as text: what an attacker with a copy of
// the catalog database would read.
func atRest(t *testing.T, backend string) (store.Store, func() string) {
	t.Helper()
	ctx := context.Background()
	if backend == "sqlite" {
		path := filepath.Join(t.TempDir(), "catalog.db")
		st, err := sqlstore.OpenSQLite(ctx, path)
		require.NoError(t, err)
		t.Cleanup(st.Close)
		return st, func() string { return dumpSQLite(t, path) }
	}
	dsn := pgtest.NewDatabase(t)
	st, err := sqlstore.OpenPostgres(ctx, dsn, true)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st, func() string { return dumpPostgres(t, dsn) }
}

func dumpSQLite(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rows.Close())
	var out strings.Builder
	for _, tbl := range tables {
		rows, err := db.Query(`SELECT * FROM "` + tbl + `"`)
		require.NoError(t, err)
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				fmt.Fprintf(&out, "%v\t", v)
			}
			out.WriteByte('\n')
		}
		require.NoError(t, rows.Close())
	}
	return out.String()
}

func dumpPostgres(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	var out strings.Builder
	for _, tbl := range tables {
		rows, err := conn.Query(ctx, `SELECT r::text FROM "`+tbl+`" r`)
		require.NoError(t, err)
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		for _, s := range texts {
			out.WriteString(s + "\n")
		}
	}
	return out.String()
}

// TestTokenNeverReplayedThroughIdempotencyKey is the regression of the
// replay hole: a sign-in with an Idempotency-Key, then the same key and
// body sent with no credentials, used to answer 200 Idempotent-Replayed
// with the victim's access token (and kept the token in
// idempotency_keys.body). Now the token route ignores the key: the second
// request is judged on its own, and no token is stored anywhere.
func TestTokenNeverReplayedThroughIdempotencyKey(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			st, dump := atRest(t, backend)
			a := authOver(t, st)
			c, err := a.svc.Admin().CreatePrincipal(localCtx(), "victim")
			require.NoError(t, err)
			form := url.Values{"grant_type": {"client_credentials"}, "scope": {"catalog"}}.Encode()
			const key = "0190f1f4-6b1e-7c39-9a55-3c1f0b6e2a11"
			r := a.do(t, "POST", "/v1/oauth/tokens", form, "Content-Type", formType, "Idempotency-Key", key,
				"Authorization", "Basic "+basic(c.ClientID, c.ClientSecret))
			require.Equal(t, 200, r.status, "%s", r.body)
			tok := r.json(t)["access_token"].(string)
			require.Equal(t, "no-store", r.header.Get("Cache-Control"))

			r = a.do(t, "POST", "/v1/oauth/tokens", form, "Content-Type", formType, "Idempotency-Key", key)
			require.Equal(t, 401, r.status, "a key without credentials must not be answered: %s", r.body)
			require.Empty(t, r.header.Get("Idempotent-Replayed"))
			require.NotContains(t, string(r.body), tok)

			rest := dump()
			require.NotContains(t, rest, tok, "the access token is stored at rest")
			require.NotContains(t, rest, c.ClientSecret, "the client secret is stored at rest")
		})
	}
}

func basic(id, secret string) string {
	return base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id) + ":" + url.QueryEscape(secret)))
}

// TestPrincipalSecretNeverStored: the answers that carry a principal's
// secret are no-store, an Idempotency-Key on the management API is not a
// replay key (a repeat runs again: 409 for the create), and the secret is
// nowhere at rest.
func TestPrincipalSecretNeverStored(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			st, dump := atRest(t, backend)
			a := authOver(t, st)
			admin, err := a.svc.Admin().CreatePrincipal(localCtx(), "admin")
			require.NoError(t, err)
			// No authorizer: every signed-in principal may manage (allow-all).
			bearer := "Bearer " + a.accessToken(t, admin.ClientID, admin.ClientSecret)
			const key = "0190f1f4-6b1e-7c39-9a55-3c1f0b6e2a12"
			body := map[string]any{"name": "etl"}
			r := a.do(t, "POST", "/management/v1/principals", body, "Authorization", bearer, "Idempotency-Key", key)
			require.Equal(t, 201, r.status, "%s", r.body)
			require.Equal(t, "no-store", r.header.Get("Cache-Control"))
			secrets := []string{r.json(t)["client-secret"].(string)}
			r = a.do(t, "POST", "/management/v1/principals", body, "Authorization", bearer, "Idempotency-Key", key)
			require.Equal(t, 409, r.status, "%s", r.body)
			require.Empty(t, r.header.Get("Idempotent-Replayed"))
			r = a.do(t, "POST", "/management/v1/principals/etl/rotate", nil, "Authorization", bearer)
			require.Equal(t, 200, r.status, "%s", r.body)
			require.Equal(t, "no-store", r.header.Get("Cache-Control"))
			secrets = append(secrets, r.json(t)["client-secret"].(string))
			rest := dump()
			for _, s := range secrets {
				require.NotEmpty(t, s)
				require.NotContains(t, rest, s)
			}
		})
	}
}

// TestVendedCredentialsNeverStoredForReplay: a create with vended
// credentials and an Idempotency-Key answers the credentials once; its
// replay is the same table result without them (config {}, no
// storage-credentials, Idempotent-Replay-Redacted: true), and no part of
// the credentials is at rest.
func TestVendedCredentialsNeverStoredForReplay(t *testing.T) {
	ep := seaweedEndpoint(t)
	ensureBucket(t, ep, "warehouse")
	st, dump := atRest(t, "sqlite")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{9}, 32))
	require.NoError(t, err)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Sealer: sealer, Credentials: vending.New(sealer)})
	_, err = svc.CreateWarehouse(context.Background(), "wh", "s3://warehouse", nil)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet}))
	t.Cleanup(hs.Close)
	b := &bundle{url: hs.URL, store: st, client: hs.Client()}
	r := b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "s3", "region": "us-east-1",
		"endpoint": ep, "path-style-access": true, "sts-endpoint": ep, "role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole",
		"access-key-id": "catalog", "secret-access-key": catalogSecret})
	require.Equal(t, 200, r.status, "%s", r.body)
	b.createNamespace(t, "ns")
	const key = "0190f1f4-6b1e-7c39-9a55-3c1f0b6e2a13"
	create := map[string]any{"name": fmt.Sprintf("keyed%d", os.Getpid()), "schema": rawJSON(testSchema)}
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables", create, "X-Iceberg-Access-Delegation", "vended-credentials", "Idempotency-Key", key)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, "no-store", r.header.Get("Cache-Control"))
	cfg := r.json(t)["config"].(map[string]any)
	var secrets []string
	for _, k := range []string{"s3.secret-access-key", "s3.session-token"} {
		v, _ := cfg[k].(string)
		require.NotEmpty(t, v, k)
		secrets = append(secrets, v)
	}
	r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables", create, "X-Iceberg-Access-Delegation", "vended-credentials", "Idempotency-Key", key)
	require.Equal(t, 200, r.status, "%s", r.body)
	require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
	require.Equal(t, "true", r.header.Get("Idempotent-Replay-Redacted"))
	replayed := r.json(t)
	require.Empty(t, replayed["config"])
	require.Nil(t, replayed["storage-credentials"])
	require.NotEmpty(t, replayed["metadata-location"])
	rest := dump()
	for _, s := range append(secrets, catalogSecret) {
		require.NotContains(t, rest, s, "a credential is stored at rest")
	}
}
