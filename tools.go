//go:build tools

// Package tools pins the code generators this module runs through `go run`.
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
)
