package store

import (
	"encoding/json"
)

// jsonArg is v as a JSON statement argument.
func jsonArg(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
