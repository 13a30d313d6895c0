//go:build tools

// Pins the generator the scenario's client is made with.
package main

import _ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
