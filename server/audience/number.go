package audience

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// IsFormula reports whether a spreadsheet would read the cell as a formula: it begins with
// = + - @, a tab or a carriage return.
func IsFormula(v string) bool {
	return v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0]))
}

// Normalize reads a phone number written in the region's local format or in international
// form (+ or 00, or bare digits with the country code when they are not a valid local
// number) and returns its digits with the country code. On failure digits is "" and detail
// says why.
func Normalize(raw, region string) (digits, detail string) {
	if strings.ContainsAny(raw, "eE") && strings.ContainsAny(raw, ".,") {
		return "", fmt.Sprintf("%q looks like a number in scientific notation: format the column as text in the spreadsheet", clip(raw))
	}
	if IsFormula(raw) && raw[0] != '+' {
		return "", fmt.Sprintf("%q is not a phone number", clip(raw))
	}
	if d, ok := parseNumber(raw, region); ok {
		return d, ""
	}
	// Not a number of the region: read it as international (after +, 00 or as bare digits),
	// also under its other WhatsApp forms (the Mexican 521 that numbering plans dropped).
	if d := intlDigits(raw); d != "" {
		for _, form := range append([]string{d}, MobileForms(d)...) {
			if v, ok := parseNumber("+"+form, region); ok {
				return v, ""
			}
		}
	}
	return "", fmt.Sprintf("%q is not a valid phone number in %s or in international form", clip(raw), region)
}

// intlDigits is the digits of raw when it is written in international form: after a + or 00,
// or bare digits of a plausible length; "" otherwise.
func intlDigits(raw string) string {
	var b strings.Builder
	for _, r := range raw {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune("+ -().", r):
		default:
			return ""
		}
	}
	d := b.String()
	t := strings.TrimSpace(raw)
	if !strings.HasPrefix(t, "+") && strings.HasPrefix(t, "00") {
		d = d[2:]
	}
	if len(d) < 8 || len(d) > 15 {
		return ""
	}
	return d
}

func parseNumber(raw, region string) (string, bool) {
	num, err := phonenumbers.Parse(raw, region)
	if err != nil || !phonenumbers.IsValidNumber(num) {
		return "", false
	}
	e164 := phonenumbers.Format(num, phonenumbers.E164)
	d := strings.TrimPrefix(e164, "+")
	if len(d) < 8 || len(d) > 15 || !allDigits(d) {
		return "", false
	}
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// clip shortens a cell for a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// personKey is one key for all of a person's forms: the smallest of them as a number.
func personKey(digits string, forms []string) uint64 {
	k, _ := strconv.ParseUint(digits, 10, 64)
	for _, f := range forms {
		if v, err := strconv.ParseUint(f, 10, 64); err == nil && v < k {
			k = v
		}
	}
	return k
}

func trimAll(s []string) []string {
	for i := range s {
		s[i] = strings.TrimSpace(s[i])
	}
	return s
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
