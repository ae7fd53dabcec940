// Package pgtest gives tests a fresh Postgres database on the server named
// by CATALOG_TEST_DATABASE_URL (scripts/test.sh starts a throwaway one).
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// NewDatabase creates an empty database and returns its URL; it is dropped
// when the test ends. Without CATALOG_TEST_DATABASE_URL the test is skipped,
// or fails when CATALOG_TEST_REQUIRE_POSTGRES=1 (as under `make test`).
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	admin := os.Getenv("CATALOG_TEST_DATABASE_URL")
	if admin == "" {
		if os.Getenv("CATALOG_TEST_REQUIRE_POSTGRES") == "1" {
			tb.Fatal("CATALOG_TEST_DATABASE_URL is not set but Postgres is required")
		}
		tb.Skip("Postgres tests need CATALOG_TEST_DATABASE_URL (make test starts a throwaway server)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("connect to test postgres: %v", err)
	}
	defer conn.Close(ctx)
	name := "t_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20]
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatalf("parse CATALOG_TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
