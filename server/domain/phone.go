package domain

import (
	"strings"

	"gateway/store"
)

// NormalizeMobile turns a number given with +, spaces, dashes, dots or parentheses into digits
// only; a leading international prefix 00 is dropped. ok is false unless 8 to 15 digits remain
// and the first is not 0 (the country code comes first). POST /contacts, the send paths and
// the operator commands apply it.
func NormalizeMobile(in string) (digits string, ok bool) {
	var b strings.Builder
	for _, r := range in {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' || r == ' ' || r == '-' || r == '(' || r == ')' || r == '.':
		default:
			return "", false
		}
	}
	digits = b.String()
	if strings.HasPrefix(strings.TrimSpace(in), "00") {
		digits = strings.TrimPrefix(digits, "00")
	}
	if len(digits) < 8 || len(digits) > 15 || digits[0] == '0' {
		return "", false
	}
	return digits, true
}

// IsWaID reports whether s is a usable sender number: 8 to 15 digits (contacts.mobile's rule).
func IsWaID(s string) bool {
	if len(s) < 8 || len(s) > 15 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// WaIDForms returns the other forms under which the same WhatsApp user may be stored (or be
// addressed), besides digits itself (store.MobileForms).
func WaIDForms(digits string) []string { return store.MobileForms(digits) }
