package credentials

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func adlsSealer(t *testing.T) *Sealer {
	s, err := NewSealer(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	return s
}

func TestParseADLSProfile(t *testing.T) {
	sealer := adlsSealer(t)
	key := map[string]any{"type": "adls", "account-name": "lakeacct", "filesystem": "lake", "account-key": "c2VjcmV0LWtleQ=="}
	principal := map[string]any{"type": "adls", "account-name": "lakeacct", "filesystem": "lake",
		"tenant-id": "t1", "client-id": "c1", "client-secret": "s3cr3t-value"}
	with := func(base map[string]any, kv ...any) []byte {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		raw, _ := json.Marshal(m)
		return raw
	}
	p, err := ParseADLSProfile(with(key), sealer)
	require.NoError(t, err)
	require.Empty(t, p.AccountKey)
	require.True(t, p.SharedKey())
	secret, err := sealer.Open(p.SealedAccountKey)
	require.NoError(t, err)
	require.Equal(t, "c2VjcmV0LWtleQ==", secret)
	require.Equal(t, "https://lakeacct.blob.core.windows.net", p.ServiceURL())
	require.Equal(t, time.Hour, p.Lifetime())
	shown, _ := json.Marshal(p.Redacted())
	require.NotContains(t, string(shown), "sealed")

	p, err = ParseADLSProfile(with(principal, "endpoint", "http://127.0.0.1:10000", "sas-lifetime", "30m"), sealer)
	require.NoError(t, err)
	require.False(t, p.SharedKey())
	require.Empty(t, p.ClientSecret)
	require.Equal(t, "http://127.0.0.1:10000/lakeacct", p.ServiceURL(), "an emulator takes the account in the path")
	require.Equal(t, 30*time.Minute, p.Lifetime())
	shown, _ = json.Marshal(p.Redacted())
	require.NotContains(t, string(shown), "secret")

	bad := []struct {
		raw    []byte
		reason string
	}{
		{with(key, "type", "s3"), "type"},
		{with(key, "account-name", "Lake"), "account-name"},
		{with(key, "account-name", "ab"), "account-name"},
		{with(key, "filesystem", "a--b"), "filesystem"},
		{with(key, "filesystem", "-ab"), "filesystem"},
		{with(key, "filesystem", strings.Repeat("a", 64)), "filesystem"},
		{with(key, "endpoint-suffix", "core..net"), "endpoint-suffix"},
		{with(key, "endpoint", "ftp://x"), "endpoint"},
		{with(key, "endpoint", "https://h/acct"), "endpoint"},
		{with(key, "sas-lifetime", "1m"), "sas-lifetime"},
		{with(key, "sas-lifetime", "200h"), "sas-lifetime"},
		{with(key, "account-key", nil), "required"},
		{with(key, "client-id", "c1"), "not both"},
		{with(principal, "client-secret", nil), "required"},
		{with(principal, "authority-host", "http://login.example"), "authority-host"},
		{with(key, "sealed-account-key", "x"), "sealed"},
		{with(key, "role-arn", "x"), "unknown field"},
	}
	for _, c := range bad {
		_, err := ParseADLSProfile(c.raw, sealer)
		require.ErrorContains(t, err, c.reason, "%s", c.raw)
		require.NotContains(t, err.Error(), "s3cr3t-value")
		require.NotContains(t, err.Error(), "c2VjcmV0LWtleQ==")
	}
	_, _, err = ParseProfile(with(key), sealer)
	require.NoError(t, err, "ParseProfile dispatches adls")
}

func TestADLSLocation(t *testing.T) {
	p := &ADLSProfile{Type: "adls", AccountName: "lakeacct", Filesystem: "lake"}
	l, err := p.ParseADLSLocation("abfss://lake@lakeacct.dfs.core.windows.net/wh/ns/t")
	require.NoError(t, err)
	require.Equal(t, ADLSLocation{Host: "lakeacct.dfs.core.windows.net", Container: "lake", Dir: "wh/ns/t"}, l)
	l, err = p.ParseADLSLocation("wasbs://lake@lakeacct.blob.core.windows.net/wh/ns/t")
	require.NoError(t, err)
	require.Equal(t, "wh/ns/t", l.Dir)
	for _, bad := range []string{
		"abfss://lake@lakeacct.dfs.core.windows.net",           // the whole filesystem
		"abfss://lake@lakeacct.dfs.core.windows.net/",          // the same
		"abfss://other@lakeacct.dfs.core.windows.net/wh/t",     // another filesystem
		"abfss://lake@otheracct.dfs.core.windows.net/wh/t",     // another account
		"abfss://lake@lakeacct.dfs.core.chinacloudapi.cn/wh/t", // another cloud
		"abfss://lake@lakeacct.file.core.windows.net/wh/t",     // another service
		"s3://lake/wh/t",
	} {
		_, err := p.ParseADLSLocation(bad)
		require.Error(t, err, bad)
	}
}

func TestADLSConfigAndAllowlist(t *testing.T) {
	p := &ADLSProfile{AccountName: "lakeacct", EndpointSuffix: "core.usgovcloudapi.net"}
	exp := time.UnixMilli(1_800_000_000_000)
	cfg := ADLSConfig(p, "sv=x&sig=y", exp)
	require.Equal(t, map[string]string{
		"adls.sas-token.lakeacct.dfs.core.usgovcloudapi.net":                "sv=x&sig=y",
		"adls.sas-token.lakeacct.blob.core.usgovcloudapi.net":               "sv=x&sig=y",
		"adls.sas-token-expires-at-ms.lakeacct.dfs.core.usgovcloudapi.net":  "1800000000000",
		"adls.sas-token-expires-at-ms.lakeacct.blob.core.usgovcloudapi.net": "1800000000000",
	}, cfg)
	kept, dropped := FilterConfig(cfg)
	require.Equal(t, cfg, kept)
	require.Empty(t, dropped)
	_, dropped = FilterConfig(map[string]string{"adls.sas-token.": "x", "adls.sas-token.a b": "x", "adls.account-key": "k",
		"adls.auth.shared-key.account.key": "k", "adls.refresh-credentials-endpoint": "v1/x"})
	require.Len(t, dropped, 5, "no account key, no malformed host, refresh only in storage-credentials")
	kept, _ = FilterCredential(map[string]string{"adls.refresh-credentials-endpoint": "v1/x"})
	require.Len(t, kept, 1)
	require.Equal(t, "rl", SASPermissions(AccessRead))
	require.Equal(t, "racwdl", SASPermissions(AccessReadWrite))
}
