package whatsapp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// The platform is not consistent about JSON types (ids are strings in API answers
// and numbers in webhooks; timestamps are strings; coordinates are numbers in
// examples and strings in the OpenAPI file). These decoders accept either form and
// never fail, leaving the zero value for anything else.

// flexString holds a JSON string, or a JSON number kept verbatim (no float rounding).
type flexString string

// UnmarshalJSON never fails; see the type.
func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	switch c := b[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(b, &s) == nil {
			*f = flexString(s)
		}
	case c == '-' || (c >= '0' && c <= '9'):
		var n json.Number
		if json.Unmarshal(b, &n) == nil {
			*f = flexString(n.String())
		}
	}
	return nil
}

// flexInt holds a JSON integer given as a number or a numeric string.
type flexInt int64

// UnmarshalJSON never fails; see the type.
func (f *flexInt) UnmarshalJSON(b []byte) error {
	var s flexString
	_ = s.UnmarshalJSON(b)
	str := strings.TrimSpace(string(s))
	if str == "" {
		return nil
	}
	if n, err := strconv.ParseInt(str, 10, 64); err == nil {
		*f = flexInt(n)
	} else if x, err := strconv.ParseFloat(str, 64); err == nil {
		*f = flexInt(int64(x))
	}
	return nil
}

// flexFloat holds a JSON number given as a number or a numeric string.
type flexFloat float64

// UnmarshalJSON never fails; see the type.
func (f *flexFloat) UnmarshalJSON(b []byte) error {
	var s flexString
	_ = s.UnmarshalJSON(b)
	if x, err := strconv.ParseFloat(strings.TrimSpace(string(s)), 64); err == nil {
		*f = flexFloat(x)
	}
	return nil
}

func isNull(b []byte) bool {
	return string(bytes.TrimSpace(b)) == "null"
}

// objectOf decodes raw as a JSON object; ok is false for anything else.
func objectOf(raw []byte) (map[string]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// arrayOf decodes raw as a JSON array; ok is false for anything else.
func arrayOf(raw []byte) ([]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var a []json.RawMessage
	if json.Unmarshal(raw, &a) != nil {
		return nil, false
	}
	return a, true
}
