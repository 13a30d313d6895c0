package simulator

import (
	"testing"
	"time"
)

func TestWaIDFor(t *testing.T) {
	cases := map[string]string{
		"525512345678":  "5215512345678", // MX
		"5215512345678": "5215512345678",
		"5531987654321": "553187654321",  // BR DDD 31
		"5561987654321": "556187654321",  // BR DDD 61
		"5521987654321": "5521987654321", // BR DDD 21 keeps the 9
		"553187654321":  "553187654321",  // already 12 digits
		"541112345678":  "5491112345678", // AR
		"5491112345678": "5491112345678",
		"447700900123":  "447700900123",
	}
	for in, want := range cases {
		if got := WaIDFor(in); got != want {
			t.Errorf("WaIDFor(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestRecipientDigits(t *testing.T) {
	ok := map[string]string{
		"+1 (555) 123-4567": "15551234567",
		"15551234567":       "15551234567",
		"+55 31.98765-4321": "5531987654321",
	}
	for in, want := range ok {
		if got, valid := recipientDigits(in); !valid || got != want {
			t.Errorf("recipientDigits(%q) = %q %v", in, got, valid)
		}
	}
	for _, bad := range []string{"", "+1555abc", "1234567", "1234567890123456", "1+5551234567"} {
		if _, valid := recipientDigits(bad); valid {
			t.Errorf("recipientDigits(%q) accepted", bad)
		}
	}
	if got := displayDigits("+55 31 98765-4321"); got != "553187654321" {
		t.Errorf("displayDigits BR = %s", got)
	}
}

func TestPairBucket(t *testing.T) {
	var b pairBucket
	now := time.Unix(1000, 0)
	for i := range 3 {
		if !b.take(now, 6*time.Second, 3) {
			t.Fatalf("take %d of a burst of 3", i)
		}
	}
	if b.take(now, 6*time.Second, 3) {
		t.Fatal("burst exceeded")
	}
	if b.take(now.Add(5*time.Second), 6*time.Second, 3) {
		t.Fatal("a token before the interval")
	}
	if !b.take(now.Add(6*time.Second), 6*time.Second, 3) || b.take(now.Add(6*time.Second), 6*time.Second, 3) {
		t.Fatal("one token per interval")
	}
	if !b.take(now.Add(time.Hour), 6*time.Second, 3) {
		t.Fatal("refill")
	}
}
