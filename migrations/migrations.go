// Package migrations holds the database schema as numbered golang-migrate files
// (NNNNNN_name.up.sql and .down.sql), embedded so the binary migrates itself.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
