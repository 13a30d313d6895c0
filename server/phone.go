package server

import "strings"

// normalizeMobile turns a number given with +, spaces, dashes, dots or parentheses into digits
// only; a leading international prefix 00 is dropped. ok is false unless 8 to 15 digits remain
// and the first is not 0 (the country code comes first).
func normalizeMobile(in string) (digits string, ok bool) {
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
