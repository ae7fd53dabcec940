package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

var _ store.Principals = (*Store)(nil)

const principalCols = `id, name, client_id, secret_hash, secret_generation, created_at, rotated_at`

func scanPrincipal(r sqldb.Row) (*store.Principal, error) {
	var p store.Principal
	var created, rotated int64
	if err := r.Scan(&p.ID, &p.Name, &p.ClientID, &p.SecretHash, &p.SecretGeneration, &created, &rotated); err != nil {
		return nil, err
	}
	p.CreatedAt, p.RotatedAt = time.UnixMilli(created), time.UnixMilli(rotated)
	return &p, nil
}

// PrincipalCreate implements store.Principals.
func (s *Store) PrincipalCreate(ctx context.Context, p *store.Principal) error {
	p.ID = uuid.NewString()
	p.SecretGeneration = 1
	now := s.clock.Now()
	p.CreatedAt, p.RotatedAt = now, now
	_, err := s.db.Exec(ctx,
		`INSERT INTO principals (id, name, client_id, secret_hash, secret_generation, created_at, rotated_at)
		 VALUES ($1, $2, $3, $4, 1, $5, $5)`,
		p.ID, p.Name, p.ClientID, p.SecretHash, now.UnixMilli())
	if err != nil && s.db.Classify(err) == sqldb.ClassUnique {
		return &store.AlreadyExistsError{Name: p.Name}
	}
	return s.wrap(err, "create principal")
}

// principalWhere reads the one principal matching the condition.
func (s *Store) principalWhere(ctx context.Context, cond, arg, what string) (*store.Principal, error) {
	p, err := scanPrincipal(s.db.QueryRow(ctx, `SELECT `+principalCols+` FROM principals WHERE `+cond+` = $1`, arg))
	if err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return nil, fmt.Errorf("%w: principal", store.ErrNotFound)
		}
		return nil, s.wrap(err, what)
	}
	return p, nil
}

// PrincipalGet implements store.Principals.
func (s *Store) PrincipalGet(ctx context.Context, name string) (*store.Principal, error) {
	return s.principalWhere(ctx, "name", name, "get principal")
}

// PrincipalByClientID implements store.Principals.
func (s *Store) PrincipalByClientID(ctx context.Context, clientID string) (*store.Principal, error) {
	return s.principalWhere(ctx, "client_id", clientID, "get principal by client id")
}

// PrincipalList implements store.Principals.
func (s *Store) PrincipalList(ctx context.Context, page store.Page) ([]*store.Principal, string, error) {
	out, next, err := s.principalList(ctx, page)
	if err != nil {
		return nil, "", s.wrap(err, "list principals")
	}
	return out, next, nil
}

func (s *Store) principalList(ctx context.Context, page store.Page) ([]*store.Principal, string, error) {
	after := ""
	if page.Token != "" {
		var err error
		if after, err = decodeToken(page.Token); err != nil {
			return nil, "", err
		}
	}
	rows, err := s.db.Query(ctx, `SELECT `+principalCols+` FROM principals WHERE name > $1 ORDER BY name LIMIT $2`,
		after, probeLimit(page.Size))
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	out := []*store.Principal{}
	for rows.Next() {
		p, err := scanPrincipal(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if page.Size <= 0 || len(out) <= page.Size {
		return out, "", nil
	}
	out = out[:page.Size]
	return out, encodeToken(out[page.Size-1].Name), nil
}

// PrincipalRotate implements store.Principals.
func (s *Store) PrincipalRotate(ctx context.Context, name, secretHash string) (*store.Principal, error) {
	p, err := scanPrincipal(s.db.QueryRow(ctx,
		`UPDATE principals SET secret_hash = $1, secret_generation = secret_generation + 1, rotated_at = $2
		 WHERE name = $3 RETURNING `+principalCols, secretHash, s.clock.Now().UnixMilli(), name))
	if err != nil {
		if s.db.Classify(err) == sqldb.ClassNoRows {
			return nil, fmt.Errorf("%w: principal", store.ErrNotFound)
		}
		return nil, s.wrap(err, "rotate principal secret")
	}
	return p, nil
}

// PrincipalDelete implements store.Principals.
func (s *Store) PrincipalDelete(ctx context.Context, name string) error {
	n, err := s.db.Exec(ctx, `DELETE FROM principals WHERE name = $1`, name)
	if err != nil {
		return s.wrap(err, "delete principal")
	}
	if n == 0 {
		return fmt.Errorf("%w: principal", store.ErrNotFound)
	}
	return nil
}
