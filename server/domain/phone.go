package domain

import (
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"

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

// CheckCountryRules checks a number already in digits (NormalizeMobile) against the country
// rules of its country code (libphonenumber's metadata, github.com/nyaruka/phonenumbers): it
// passes when the number, or one of the other forms WhatsApp keeps for the same user
// (WaIDForms: a Brazilian mobile without its ninth digit, a Mexican one with its 1), is a
// valid number of its country. The reason is a sentence for the person who typed it, ""
// when the number passes. The dashboard's send form applies it on top of NormalizeMobile; the
// API does not (its clients may address numbers the metadata does not know yet).
func CheckCountryRules(digits string) (reason string) {
	for _, d := range append([]string{digits}, WaIDForms(digits)...) {
		if n, err := phonenumbers.Parse("+"+d, ""); err == nil && phonenumbers.IsValidNumber(n) {
			return ""
		}
	}
	n, err := phonenumbers.Parse("+"+digits, "")
	region := ""
	if err == nil {
		region = phonenumbers.GetRegionCodeForNumber(n)
		if region == "" {
			// A number no region's rules accept still names its country code's main region.
			region = phonenumbers.GetRegionCodeForCountryCode(int(n.GetCountryCode()))
		}
	}
	if region == "" || region == "ZZ" || region == "001" {
		return "+" + digits + " is not a number of any country: it must start with the country code " +
			"(for example 55 for Brazil, then the area code and the number: 5511987654321)."
	}
	return "+" + digits + " is not a valid number in " + regionName(region) + " (country code " +
		strconv.Itoa(int(n.GetCountryCode())) + "). Write the whole number starting with the country code, " +
		"for example 5511987654321 for a mobile in São Paulo, Brazil."
}

// FormatMobile shows a number kept as digits in the international format of its country
// ("+55 11 98765-4321"); a number the country rules do not know is shown as "+" and its digits,
// and "" stays "".
func FormatMobile(digits string) string {
	if digits == "" {
		return ""
	}
	n, err := phonenumbers.Parse("+"+digits, "")
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return "+" + digits
	}
	return phonenumbers.Format(n, phonenumbers.INTERNATIONAL)
}

// regionName is a country's English name for the regions a refusal names most, else its
// ISO code.
func regionName(region string) string {
	if n, ok := regionNames[region]; ok {
		return n
	}
	return region
}

var regionNames = map[string]string{
	"BR": "Brazil", "US": "the United States", "MX": "Mexico", "AR": "Argentina", "CO": "Colombia",
	"IN": "India", "ID": "Indonesia", "DE": "Germany", "GB": "the United Kingdom", "ES": "Spain",
	"IT": "Italy", "FR": "France", "PT": "Portugal", "NG": "Nigeria", "ZA": "South Africa",
	"IR": "Iran", "TR": "Türkiye", "EG": "Egypt", "PK": "Pakistan", "PH": "the Philippines",
}
