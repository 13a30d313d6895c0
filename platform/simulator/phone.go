package simulator

import "strings"

// recipientDigits returns the digits of a phone number written with an
// optional leading '+', spaces, dashes, dots and parentheses, as the Cloud API
// accepts in "to". ok is false when any other character is present or the
// result is not 8 to 15 digits long.
func recipientDigits(s string) (digits string, ok bool) {
	s = strings.TrimSpace(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
		case r == ' ' || r == '-' || r == '(' || r == ')' || r == '.':
		default:
			return "", false
		}
	}
	d := b.String()
	if len(d) < 8 || len(d) > 15 {
		return "", false
	}
	return d, true
}

// onlyDigits drops every character of s that is not an ASCII digit.
func onlyDigits(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// WaIDFor returns the wa_id WhatsApp reports for the given digits-only phone
// number, reproducing the rewrites integrators see:
//
//   - Mexico: 52 + 10 digits becomes 521 + 10 digits;
//   - Brazil: 55 + area code (DDD) + 9 + 8 digits loses the mobile 9 when the
//     DDD is 31 or more (12 digits instead of 13);
//   - Argentina: 54 + 10 digits becomes 549 + 10 digits.
//
// Any other number is returned unchanged. It never fails.
func WaIDFor(digits string) string {
	switch {
	case strings.HasPrefix(digits, "52") && len(digits) == 12:
		return "521" + digits[2:]
	case strings.HasPrefix(digits, "55") && len(digits) == 13 && digits[4] == '9' && brazilDDD(digits) >= 31:
		return digits[:4] + digits[5:]
	case strings.HasPrefix(digits, "54") && len(digits) == 12 && digits[2] != '9':
		return "549" + digits[2:]
	}
	return digits
}

// brazilDDD returns the two-digit area code of a Brazilian number that starts
// with 55, or 0 when it is not two digits.
func brazilDDD(digits string) int {
	if len(digits) < 4 {
		return 0
	}
	a, b := digits[2], digits[3]
	if a < '0' || a > '9' || b < '0' || b > '9' {
		return 0
	}
	return int(a-'0')*10 + int(b-'0')
}

// displayDigits returns the business number as Meta puts it in
// metadata.display_phone_number: digits only, and for Brazilian numbers with
// a DDD of 31 or more without the mobile 9 (the quirk that breaks matching by
// display number).
func displayDigits(display string) string {
	d := onlyDigits(display)
	if strings.HasPrefix(d, "55") && len(d) == 13 && d[4] == '9' && brazilDDD(d) >= 31 {
		return d[:4] + d[5:]
	}
	return d
}
