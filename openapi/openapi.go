// Package openapi holds the hand-written contract of the API. The same bytes generate the code
// in gen/, drive request validation, and are published at /v1/openapi.yaml and /v1/openapi.json.
package openapi

import _ "embed"

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config oapi-codegen.yaml openapi.yaml

// YAML is the contract exactly as written in openapi.yaml.
//
//go:embed openapi.yaml
var YAML []byte
