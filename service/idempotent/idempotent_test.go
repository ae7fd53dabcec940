package idempotent_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service/idempotent"
	"github.com/lakehold/catalog/store/sqlstore"
)

func newKeys(t *testing.T) *idempotent.Keys {
	t.Helper()
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return idempotent.New(st, st.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func req(key, op, body string) idempotent.Request {
	return idempotent.Request{Key: key, Operation: op, Body: []byte(body), Lifetime: time.Hour,
		Lease: time.Second, MaxWait: 200 * time.Millisecond}
}

// A finished key is replayed to the same request and refused (422) to any
// other operation or body under it.
func TestBeginReplaysAndRefusesOtherRequests(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t)
	out, claim, err := k.Begin(ctx, req("k1", "POST /v1/wh/namespaces", `{"namespace":["a"]}`))
	require.NoError(t, err)
	require.Nil(t, out)
	require.NotNil(t, claim)
	require.NoError(t, claim.Finish(ctx, idempotent.Outcome{Status: 200, Headers: map[string]string{"ETag": `"x"`}, Body: []byte("done")}))

	out, claim, err = k.Begin(ctx, req("k1", "POST /v1/wh/namespaces", `{"namespace":["a"]}`))
	require.NoError(t, err)
	require.Nil(t, claim)
	require.Equal(t, 200, out.Status)
	require.Equal(t, "done", string(out.Body))
	require.Equal(t, `"x"`, out.Headers["ETag"])

	for name, r := range map[string]idempotent.Request{
		"other body":      req("k1", "POST /v1/wh/namespaces", `{"namespace":["b"]}`),
		"other operation": req("k1", "DELETE /v1/wh/namespaces/a", `{"namespace":["a"]}`),
	} {
		_, _, err := k.Begin(ctx, r)
		require.Equal(t, fault.Unprocessable, fault.KindOf(err), name)
	}
}

// A duplicate of a request that still runs waits, then answers 503; once
// the first abandons its key, the duplicate runs.
func TestBeginWaitsForTheRunningRequest(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t)
	_, first, err := k.Begin(ctx, req("k2", "POST /x", "b"))
	require.NoError(t, err)
	_, _, err = k.Begin(ctx, req("k2", "POST /x", "b"))
	require.Equal(t, fault.Unavailable, fault.KindOf(err))
	first.Abandon(ctx)
	out, second, err := k.Begin(ctx, req("k2", "POST /x", "b"))
	require.NoError(t, err)
	require.Nil(t, out)
	require.NotNil(t, second)
	second.Abandon(ctx)
}

// Keys are per principal: another principal's request with the same key
// is not a duplicate and never sees the first one's response.
func TestBeginKeepsPrincipalsApart(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t)
	alice := identity.With(ctx, identity.Principal{Source: identity.SourceBuiltin, Subject: "alice"})
	bob := identity.With(ctx, identity.Principal{Source: identity.SourceBuiltin, Subject: "bob"})
	_, claim, err := k.Begin(alice, req("k3", "POST /x", "b"))
	require.NoError(t, err)
	require.NoError(t, claim.Finish(alice, idempotent.Outcome{Status: 200, Body: []byte("alice's")}))

	out, claim, err := k.Begin(bob, req("k3", "POST /x", "b"))
	require.NoError(t, err)
	require.Nil(t, out, "bob must not get alice's response")
	require.NotNil(t, claim)
	claim.Abandon(bob)
}
