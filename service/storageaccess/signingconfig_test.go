package storageaccess

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRemoteSigningOf(t *testing.T) {
	for _, c := range []struct {
		cfg  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{}, false},
		{map[string]string{"s3.remote-signing-enabled": "false", "s3.signer.endpoint": "v1/wh/x/sign"}, false},
		{map[string]string{"s3.access-key-id": "k"}, false},
		{map[string]string{"s3.remote-signing-enabled": "true"}, true},
		{map[string]string{"s3.remote-signing-enabled": "TRUE"}, true},
	} {
		got := RemoteSigningOf(c.cfg)
		require.Equal(t, c.want, got != nil, "%v", c.cfg)
		if got != nil {
			require.NotNil(t, got.Properties)
			require.NotNil(t, got.Headers)
		}
	}
}
