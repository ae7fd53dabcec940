package service

import (
	"context"

	"github.com/lakehold/catalog/service/idempotent"
)

// Idempotency-Keys are held by package idempotent; these names keep the
// service's API whole.
type (
	// IdempotentRequest is a mutating request that carries an Idempotency-Key.
	IdempotentRequest = idempotent.Request
	// IdempotentOutcome is a final response stored for replay.
	IdempotentOutcome = idempotent.Outcome
	// IdempotencyClaim is a key held by the running request.
	IdempotencyClaim = idempotent.Claim
)

// BeginIdempotent claims req.Key (idempotent.Keys.Begin, which says what
// is returned when).
func (s *Service) BeginIdempotent(ctx context.Context, req IdempotentRequest) (*IdempotentOutcome, *IdempotencyClaim, error) {
	return s.keys.Begin(ctx, req)
}
