package credentials

import "strings"

// configKeys are the FileIO keys the catalog may put in LoadTableResult
// config, storage-credentials and /v1/config defaults/overrides: keys that
// Java, PyIceberg, iceberg-rust and Comet's native writer all accept.
var configKeys = map[string]bool{
	"client.region": true, "s3.region": true, "s3.endpoint": true, "s3.path-style-access": true,
	"s3.access-key-id": true, "s3.secret-access-key": true, "s3.session-token": true,
	"s3.sse.type": true, "s3.sse.key": true, "s3.sse.md5": true,
	"gcs.oauth2.token": true, "gcs.oauth2.token-expires-at": true, "gcs.project-id": true,
	"gcs.service.host": true, "gcs.service.path": true,
}

// credentialOnlyKeys may appear in storage-credentials[].config only.
var credentialOnlyKeys = map[string]bool{
	"s3.session-token-expires-at-ms":          true,
	"client.refresh-credentials-endpoint":     true,
	"gcs.oauth2.refresh-credentials-endpoint": true,
	"adls.refresh-credentials-endpoint":       true,
}

// signingKeys are what the catalog answers instead of credentials for a
// table whose engines sign through it (remote signing): the Java and
// PyIceberg switches and PyIceberg's signer and FileIO. Comet's native
// writer accepts none of them, so they never pass FilterConfig.
var signingKeys = map[string]bool{
	"s3.remote-signing-enabled": true, "s3.signer": true, "s3.signer.endpoint": true, "py-io-impl": true,
}

// catalogKeys are catalog-level (not FileIO) keys /v1/config may carry.
var catalogKeys = map[string]bool{"prefix": true, "warehouse": true, "namespace-separator": true, "rest-page-size": true}

// sseTypes are the s3.sse.type values every client supports.
var sseTypes = map[string]bool{"none": true, "s3": true, "kms": true, "custom": true}

// allowed reports whether key=value may be emitted.
func allowed(key, value string, credential bool) bool {
	if key == "s3.sse.type" && !sseTypes[strings.ToLower(value)] {
		return false
	}
	return configKeys[key] || (credential && credentialOnlyKeys[key]) || adlsHostKey(key)
}

// FilterConfig returns the entries of a LoadTableResult config that pass
// the allowlist, and the keys it dropped.
func FilterConfig(cfg map[string]string) (map[string]string, []string) {
	return filter(cfg, func(k, v string) bool { return allowed(k, v, false) })
}

// FilterCredential is FilterConfig for storage-credentials[].config, which
// may also carry expiry and refresh-endpoint keys.
func FilterCredential(cfg map[string]string) (map[string]string, []string) {
	return filter(cfg, func(k, v string) bool { return allowed(k, v, true) })
}

// FilterCatalogConfig is FilterConfig for /v1/config defaults and
// overrides, which also carry catalog keys such as prefix.
func FilterCatalogConfig(cfg map[string]string) (map[string]string, []string) {
	return filter(cfg, func(k, v string) bool { return catalogKeys[k] || allowed(k, v, false) })
}

func filter(cfg map[string]string, ok func(k, v string) bool) (map[string]string, []string) {
	out := make(map[string]string, len(cfg))
	var dropped []string
	for k, v := range cfg {
		if ok(k, v) {
			out[k] = v
		} else {
			dropped = append(dropped, k)
		}
	}
	return out, dropped
}

// adlsHostKey accepts the per-account Azure keys (adls.sas-token.<host>,
// adls.sas-token-expires-at-ms.<host>) for a storage account host.
func adlsHostKey(key string) bool {
	host, ok := strings.CutPrefix(key, "adls.sas-token.")
	if !ok {
		host, ok = strings.CutPrefix(key, "adls.sas-token-expires-at-ms.")
	}
	return ok && adlsSuffix.MatchString(host)
}
