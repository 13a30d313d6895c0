package dashboard

import "testing"

// A cell a spreadsheet would read as a formula (or as the start of one after the tab or
// carriage return it skips) is kept as text with a leading quote; the full-width forms of the
// formula signs count too. Anything else is unchanged.
func TestCSVSafe(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1+1":                     "'+1+1",
		"-2+3":                     "'-2+3",
		"@SUM(A1)":                 "'@SUM(A1)",
		"\t=1+1":                   "'\t=1+1",
		"\r=1+1":                   "'\r=1+1",
		"\n=1+1":                   "\n=1+1",
		"＝1+1":                     "'＝1+1",
		"＋1":                       "'＋1",
		"－1":                       "'－1",
		"＠SUM(A1)":                 "'＠SUM(A1)",
		"order_confirmation":       "order_confirmation",
		"Message undeliverable":    "Message undeliverable",
		"5511987654321":            "5511987654321",
		"":                         "",
		"a=b":                      "a=b",
	} {
		if got := csvSafe(in); got != want {
			t.Errorf("csvSafe(%q) = %q, want %q", in, got, want)
		}
	}
}
