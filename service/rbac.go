package service

import (
	"context"
	"fmt"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/store"
)

// listVisibility decides a listing under container: nil when the caller
// holds priv on it (every child inherits it, so everything is visible), a
// store filter when the caller may see container but lacks priv (the
// listing then shows only what they hold something on), or the
// authorization error.
func (s *Service) listVisibility(ctx context.Context, priv Privilege, container Resource) (*store.Visibility, error) {
	err := s.ta.Authorize(ctx, priv, container)
	if err == nil || fault.KindOf(err) != fault.Forbidden {
		return nil, err
	}
	f, ok := s.opts.Authorizer.(ListFilter)
	if !ok {
		return nil, err
	}
	v := f.Visibility(identity.From(ctx))
	if v == nil {
		return nil, fmt.Errorf("authorizer denied %s but filters nothing: %w", priv, err)
	}
	return v, nil
}
