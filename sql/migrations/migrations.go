// Package migrations embeds the numbered schema migrations. Each file is
// applied once, in name order, in its own transaction; applied files are
// never edited, later changes are new files.
package migrations

import "embed"

// FS holds the NNNN_name.sql files.
//
//go:embed *.sql
var FS embed.FS
