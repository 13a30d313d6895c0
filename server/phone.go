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

// isWaID reports whether s is a usable sender number: 8 to 15 digits (contacts.mobile's rule).
func isWaID(s string) bool {
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

// waIDForms returns the other forms under which the same WhatsApp user may be stored (or be
// addressed), besides digits itself:
//   - Mexico: 521 + 10 digits ↔ 52 + 10 digits;
//   - Brazil: 55 + area code + 8 digits ↔ 55 + area code + 9 + 8 digits (the mobile 9);
//   - Argentina: 549 + 10 digits ↔ 54 + 10 digits.
//
// It returns nil for any other number.
func waIDForms(digits string) []string {
	n := len(digits)
	switch {
	case strings.HasPrefix(digits, "521") && n == 13:
		return []string{"52" + digits[3:]}
	case strings.HasPrefix(digits, "52") && n == 12:
		return []string{"521" + digits[2:]}
	case strings.HasPrefix(digits, "549") && n == 13:
		return []string{"54" + digits[3:]}
	case strings.HasPrefix(digits, "54") && n == 12:
		return []string{"549" + digits[2:]}
	case strings.HasPrefix(digits, "55") && n == 13 && digits[4] == '9':
		return []string{digits[:4] + digits[5:]}
	case strings.HasPrefix(digits, "55") && n == 12:
		return []string{digits[:4] + "9" + digits[4:]}
	}
	return nil
}
