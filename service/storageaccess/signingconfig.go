package storageaccess

import "strings"

// RemoteSigningConfig is a table result's remote-signing-config (the REST
// spec after 1.11, which deprecates the signer.* config keys for it):
// what a signing client needs beyond the table's sign route, which the
// client derives itself. Lakehold's signer needs nothing else, so both
// maps are empty; they are sent, not omitted, so that a client that keys
// on the object's presence sees signing is on.
type RemoteSigningConfig struct {
	// Properties are echoed back in every RemoteSignRequest.
	Properties map[string]string
	// Headers are sent with every signing request.
	Headers map[string][]string
}

// RemoteSigningOf returns the remote-signing-config that goes with a table
// result's config: non-nil exactly when the config turns remote signing
// on (s3.remote-signing-enabled, as Grant's signing config does), so the
// two shapes never disagree. The config keys themselves stay: 1.11
// clients read only them.
func RemoteSigningOf(cfg map[string]string) *RemoteSigningConfig {
	if !strings.EqualFold(cfg["s3.remote-signing-enabled"], "true") {
		return nil
	}
	return &RemoteSigningConfig{Properties: map[string]string{}, Headers: map[string][]string{}}
}
