package audience

import "strings"

// MobileForms returns the other forms under which WhatsApp may address the same user,
// besides digits itself (nil for most numbers):
//   - Mexico: 521 + 10 digits ↔ 52 + 10 digits;
//   - Brazil: 55 + area code + 8 digits ↔ 55 + area code + 9 + 8 digits (the mobile 9);
//   - Argentina: 549 + 10 digits ↔ 54 + 10 digits.
//
// It is the gateway's rule for contacts (the store package's MobileForms), repeated here so
// that this package stays free of the database packages; a test checks that both agree.
func MobileForms(digits string) []string {
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
