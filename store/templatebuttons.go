package store

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// TemplateButton is what a send needs of one template button, parsed from the platform's
// components at sync time.
type TemplateButton struct {
	Index int    `json:"index"` // 0-based position among the template's buttons
	Type  string `json:"type"`  // QUICK_REPLY, URL, COPY_CODE, OTP, PHONE_NUMBER, FLOW, ...
	Text  string `json:"text"`
	// TakesValue: a send may give the button a value (URL with {{1}}, COPY_CODE, OTP, QUICK_REPLY).
	TakesValue bool `json:"takes_value"`
}

// TemplateButtons is a template's buttons in order, stored as a jsonb array.
type TemplateButtons []TemplateButton

// Value encodes the buttons as a JSON array ([] for none). It never fails.
func (b TemplateButtons) Value() (driver.Value, error) {
	if len(b) == 0 {
		return "[]", nil
	}
	out, err := json.Marshal([]TemplateButton(b))
	return string(out), err
}

// Scan decodes a jsonb array; NULL is no buttons. It fails for anything else than a JSON array
// of buttons.
func (b *TemplateButtons) Scan(src any) error {
	var raw []byte
	switch v := src.(type) {
	case nil:
		*b = nil
		return nil
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		return fmt.Errorf("template buttons: cannot scan %T", src)
	}
	var out []TemplateButton
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("template buttons: %w", err)
	}
	*b = out
	return nil
}

// nullString is s, or NULL when s is "".
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// orNoStrings keeps a nil list as an empty array (the column is NOT NULL).
func orNoStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
