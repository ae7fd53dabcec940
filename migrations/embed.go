// Package migrations embeds the schema migrations (golang-migrate format).
// The same portable SQL files migrate Postgres and the embedded SQLite file.
package migrations

import "embed"

// FS holds every *.sql migration, numbered so that lexical order is numeric.
//
//go:embed *.sql
var FS embed.FS
