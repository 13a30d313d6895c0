package whatsapp

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestSignatureHeaderKnownVector(t *testing.T) {
	// RFC-style vector: HMAC-SHA256(key="key", "The quick brown fox jumps over the lazy dog").
	got := SignatureHeader([]byte("key"), []byte("The quick brown fox jumps over the lazy dog"))
	if want := "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"; got != want {
		t.Errorf("SignatureHeader = %q, want %q", got, want)
	}
}

func TestSignatureGoldenWebhook(t *testing.T) {
	// The golden value was computed with `openssl dgst -sha256 -hmac test-app-secret`
	// over the raw fixture, which keeps Meta-style \u00e9 and \/ escapes.
	secret := []byte("test-app-secret")
	body := readTestdata(t, "webhook_statuses.json")
	want := strings.TrimSpace(string(readTestdata(t, "webhook_statuses.signature.golden")))
	if got := SignatureHeader(secret, body); got != want {
		t.Errorf("SignatureHeader = %q, want %q", got, want)
	}
	if !VerifySignature(secret, body, want) {
		t.Error("VerifySignature rejected the golden signature")
	}

	// Re-serialising the JSON changes the bytes, so the signature no longer matches.
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	reencoded, _ := json.Marshal(v)
	if VerifySignature(secret, reencoded, want) {
		t.Error("VerifySignature accepted a re-serialised body")
	}
}

func TestVerifySignature(t *testing.T) {
	secret := []byte("app-secret")
	body := []byte(`{"object":"whatsapp_business_account","entry":[]}`)
	good := SignatureHeader(secret, body)
	hexPart := strings.TrimPrefix(good, "sha256=")

	tampered := bytes.Clone(body)
	tampered[len(tampered)-3] = '{'

	tests := []struct {
		name   string
		secret []byte
		body   []byte
		header string
		want   bool
	}{
		{"valid", secret, body, good, true},
		{"uppercase hex is accepted", secret, body, "sha256=" + strings.ToUpper(hexPart), true},
		{"tampered body", secret, tampered, good, false},
		{"body with trailing newline", secret, append(bytes.Clone(body), '\n'), good, false},
		{"wrong secret", []byte("other-secret"), body, good, false},
		{"empty secret", nil, body, SignatureHeader(nil, body), false},
		{"missing header", secret, body, "", false},
		{"missing sha256= prefix", secret, body, hexPart, false},
		{"uppercase prefix", secret, body, "SHA256=" + hexPart, false},
		{"sha1 prefix", secret, body, "sha1=" + hexPart, false},
		{"prefix only", secret, body, "sha256=", false},
		{"truncated", secret, body, good[:len(good)-2], false},
		{"extra digits", secret, body, good + "00", false},
		{"non-hex digit", secret, body, good[:len(good)-1] + "g", false},
		{"surrounding space", secret, body, " " + good, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VerifySignature(tt.secret, tt.body, tt.header); got != tt.want {
				t.Errorf("VerifySignature = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVerifyChallenge(t *testing.T) {
	q := func(mode, token, challenge string) url.Values {
		return url.Values{"hub.mode": {mode}, "hub.verify_token": {token}, "hub.challenge": {challenge}}
	}
	tests := []struct {
		name     string
		query    url.Values
		expected string
		want     string
		ok       bool
	}{
		{"match", q("subscribe", "s3cret", "1158201444"), "s3cret", "1158201444", true},
		{"wrong token", q("subscribe", "nope", "1158201444"), "s3cret", "", false},
		{"wrong mode", q("unsubscribe", "s3cret", "1158201444"), "s3cret", "", false},
		{"no query", url.Values{}, "s3cret", "", false},
		{"empty configured token", q("subscribe", "", "1"), "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := VerifyChallenge(tt.query, tt.expected)
			if got != tt.want || ok != tt.ok {
				t.Errorf("VerifyChallenge = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
