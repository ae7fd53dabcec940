package identity

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFromWith: a context without a principal is anonymous; With puts one
// in and From gets it back.
func TestFromWith(t *testing.T) {
	require.Equal(t, Anonymous, From(context.Background()))
	require.Equal(t, "anonymous:anonymous", From(context.Background()).String())
	p := Principal{Source: SourceOIDC, Subject: "alice", Groups: []string{"eng"}}
	got := From(With(context.Background(), p))
	require.Equal(t, p.Subject, got.Subject)
	require.Equal(t, "oidc:alice", got.String())
}
