package store

import (
	"context"
	"time"
)

// Principal is a built-in service principal. SecretHash is the encoded
// argon2id hash of its client secret; the secret itself is never stored.
type Principal struct {
	ID               string
	Name             string
	ClientID         string
	SecretHash       string
	SecretGeneration int64 // 1 at creation, +1 per rotation
	CreatedAt        time.Time
	RotatedAt        time.Time
}

// Principals stores built-in service principals. Deleting a principal
// removes its row: a later principal of the same name gets a new ID, which
// is what keeps the old one's tokens from working for it.
type Principals interface {
	// PrincipalCreate stores p, setting ID, SecretGeneration (1),
	// CreatedAt and RotatedAt. It returns an *AlreadyExistsError when the
	// name or client id is taken.
	PrincipalCreate(ctx context.Context, p *Principal) error
	// PrincipalGet returns the principal of that name, or ErrNotFound.
	PrincipalGet(ctx context.Context, name string) (*Principal, error)
	// PrincipalByClientID returns the principal with that client id, or
	// ErrNotFound.
	PrincipalByClientID(ctx context.Context, clientID string) (*Principal, error)
	// PrincipalList returns one page of principals ordered by name and the
	// token of the next page ("" after the last). It returns
	// ErrInvalidPageToken for a token it did not issue.
	PrincipalList(ctx context.Context, page Page) ([]*Principal, string, error)
	// PrincipalRotate replaces the secret hash, increments the generation
	// and returns the updated principal, or ErrNotFound.
	PrincipalRotate(ctx context.Context, name, secretHash string) (*Principal, error)
	// PrincipalDelete removes the principal, or returns ErrNotFound.
	PrincipalDelete(ctx context.Context, name string) error
}
