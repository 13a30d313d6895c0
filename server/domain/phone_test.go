package domain

import (
	"strings"
	"testing"
)

func TestNormalizeMobile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want string // "" means refused
	}{
		{"5511987654321", "5511987654321"},
		{"+5511987654321", "5511987654321"},
		{"+55 (11) 98765-4321", "5511987654321"},
		{"55 11 98765 4321", "5511987654321"},
		{"+55-11-98765-4321", "5511987654321"},
		{" +55 11 98765 4321 ", "5511987654321"},
		{"+1.555.123.4567", "15551234567"},
		{"+1 (555) 123-4567", "15551234567"},
		{"0044 20 7946 0958", "442079460958"}, // international prefix 00
		{"00 44 20 7946 0958", "442079460958"},
		{"12345678", "12345678"},               // 8 digits, the minimum
		{"123456789012345", "123456789012345"}, // 15 digits, the maximum

		{"", ""},
		{"+", ""},
		{"00", ""},
		{"abc", ""},
		{"12", ""},
		{"1234567", ""},          // 7 digits
		{"1234567890123456", ""}, // 16 digits
		{"00 1234567890123456", ""},
		{"0123456789", ""},   // no country code
		{"+0 123456789", ""}, // a country code cannot start with 0
		{"000123456789", ""}, // 00 then 0
		{"0 044 20 7946 0958", ""},
		{"+0044 20 7946 0958", ""}, // + then 00: not a country code
		{"55 11 9876x 4321", ""},
		{"5511987654321#", ""},
		{"55/11/987654321", ""},
		{"5511987654321\n", ""},
		{"٥٥١١٩٨٧٦٥٤٣٢١", ""}, // non-ASCII digits
		{"５５１１９８７６５４３２１", ""}, // full-width digits
	} {
		got, ok := NormalizeMobile(c.in)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("NormalizeMobile(%q) = %q, %t; want %q", c.in, got, ok, c.want)
		}
	}
}

func TestCheckCountryRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		digits string
		want   string // a part of the reason; "" means it passes
	}{
		{"5511987654321", ""},
		{"551187654321", ""},  // Brazil without the ninth digit: WhatsApp's form of 5511987654321
		{"5215512345678", ""}, // Mexico with the 1: WhatsApp's form of 525512345678
		{"4915112345678", ""},
		{"16505551234", ""},
		{"987654321", "not a valid number in Iran (country code 98)"},
		{"15551234567", "not a valid number in the United States (country code 1)"},
		{"99912345678", "not a number of any country"}, // no country has the code 999
		{"5511123", "not a valid number in Brazil"},
	} {
		got := CheckCountryRules(c.digits)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("CheckCountryRules(%s) = %q, want %q", c.digits, got, c.want)
		}
	}
}

func TestFormatMobile(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"5511987654321": "+55 11 98765-4321",
		"4915112345678": "+49 1511 2345678",
		"16505551234":   "+1 650-555-1234",
		"15551234567":   "+15551234567", // unknown to the country rules: digits as kept
		"":              "",
	} {
		if got := FormatMobile(in); got != want {
			t.Errorf("FormatMobile(%q) = %q, want %q", in, got, want)
		}
	}
}
