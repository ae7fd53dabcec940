package vending_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
)

// TestCacheHalfLifetimeAndSingleFlight tests only the vendor's cache: the
// STS call is replaced by a counter (the real STS path is exercised against
// SeaweedFS in seaweed_test.go).
func TestCacheHalfLifetimeAndSingleFlight(t *testing.T) {
	v, wh, _ := vendor(t, "http://127.0.0.1:1")
	var calls atomic.Int32
	now := time.Unix(1_800_000_000, 0)
	var clock sync.Mutex
	v.WithMint(func(_ context.Context, p *credentials.S3Profile, secret, policy, session string, d time.Duration) (vending.Minted, error) {
		calls.Add(1)
		require.Equal(t, "catalogsecret", secret, "the sealed secret opens")
		require.Contains(t, policy, `"s3:prefix":["ns/t","ns/t/*"]`)
		time.Sleep(20 * time.Millisecond)
		return vending.Minted{AccessKeyID: "AK", SecretAccessKey: "SK", SessionToken: "T", Expires: now.Add(d)}, nil
	}, func() time.Time { clock.Lock(); defer clock.Unlock(); return now })
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := v.Vend(context.Background(), wh, "s3://warehouse/ns/t", credentials.AccessReadWrite)
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	require.Equal(t, int32(1), calls.Load(), "concurrent requests share one STS call")
	clock.Lock()
	now = now.Add(7 * time.Minute) // lifetime 15m: still within half
	clock.Unlock()
	_, _, err := v.Vend(context.Background(), wh, "s3://warehouse/ns/t", credentials.AccessReadWrite)
	require.NoError(t, err)
	require.Equal(t, int32(1), calls.Load())
	clock.Lock()
	now = now.Add(time.Minute) // past half the lifetime
	clock.Unlock()
	_, _, err = v.Vend(context.Background(), wh, "s3://warehouse/ns/t", credentials.AccessReadWrite)
	require.NoError(t, err)
	require.Equal(t, int32(2), calls.Load(), "refreshed after half the lifetime")
	_, _, err = v.Vend(context.Background(), wh, "s3://warehouse/ns/t", credentials.AccessRead)
	require.NoError(t, err)
	require.Equal(t, int32(3), calls.Load(), "read-only credentials are cached separately")
	_, _, err = v.Vend(context.Background(), wh, "gs://b/ns/t", credentials.AccessRead)
	require.Error(t, err, "not an S3 location")
	cfg, _, err := v.Vend(context.Background(), credentials.WarehouseInfo{Name: "x"}, "s3://warehouse/ns/t", credentials.AccessRead)
	require.NoError(t, err)
	require.Nil(t, cfg, "no profile: nothing vended")
}
