package eventhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenRequest is the fixed delivery pinned by testdata/headers.golden.
func goldenRequest(t *testing.T) Request {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "message_sent.json"))
	if err != nil {
		t.Fatal(err)
	}
	return Request{
		URL: "https://hooks.example.com/gateway",
		// base64 of the bytes 0x00..0x1f
		Secret:     "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		Event:      "message.sent",
		EventID:    "evt_8d1e5a7c",
		DeliveryID: "dlv_2f6c1b0e9a7d4c3b",
		Attempt:    3,
		// The fraction of a second is not sent: 1772368496.
		Timestamp: time.Date(2026, 3, 1, 12, 34, 56, 789_000_000, time.UTC),
		Body:      body,
	}
}

// formatHeaders renders h as sorted "Name: value" lines.
func formatHeaders(h http.Header) string {
	var lines []string
	for name, values := range h {
		for _, v := range values {
			lines = append(lines, name+": "+v)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// TestHeadersGolden pins every header of the golden request, byte for byte, without a
// rotation (headers.golden) and during one (headers_rotation.golden).
func TestHeadersGolden(t *testing.T) {
	for _, c := range []struct {
		file     string
		previous string
		names    int
	}{
		{"headers.golden", "", 12},
		// base64 of the bytes 0x20..0x3f
		{"headers_rotation.golden", "whsec_ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=", 13},
	} {
		t.Run(c.file, func(t *testing.T) {
			r := goldenRequest(t)
			r.PreviousSecret = c.previous
			h, err := r.Headers()
			if err != nil {
				t.Fatal(err)
			}
			got := formatHeaders(h)
			path := filepath.Join("testdata", c.file)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("headers differ from %s (run with -update only for an intended change)\ngot:\n%s\nwant:\n%s", path, got, want)
			}
			if len(h) != c.names {
				t.Errorf("got %d header names, want %d", len(h), c.names)
			}
			for name, values := range h {
				if len(values) != 1 {
					t.Errorf("%s has %d values, want 1", name, len(values))
				}
			}
		})
	}
}

// TestSignaturesFromSpec recomputes both signatures of the golden request
// from the text of the specifications, without the package's helpers.
func TestSignaturesFromSpec(t *testing.T) {
	r := goldenRequest(t)
	h, err := r.Headers()
	if err != nil {
		t.Fatal(err)
	}

	// Spec: "sha256= followed by the HMAC-SHA256 of the raw request body,
	// keyed with the webhook's secret" (the string shown to the customer).
	mac := hmac.New(sha256.New, []byte(r.Secret))
	mac.Write(r.Body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); h.Get("X-Service-Signature") != want {
		t.Errorf("X-Service-Signature = %q, want %q", h.Get("X-Service-Signature"), want)
	}

	// X-Service-Timestamp-Signature: "sha256=" + hex HMAC-SHA256 of
	// "{X-Service-Timestamp}.{body}", keyed as X-Service-Signature is.
	mac = hmac.New(sha256.New, []byte(r.Secret))
	mac.Write([]byte(h.Get("X-Service-Timestamp") + "." + string(r.Body)))
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); h.Get("X-Service-Timestamp-Signature") != want {
		t.Errorf("X-Service-Timestamp-Signature = %q, want %q", h.Get("X-Service-Timestamp-Signature"), want)
	}

	// Standard Webhooks: signed content is "{webhook-id}.{webhook-timestamp}.{body}",
	// the key is the base64 part of the secret after "whsec_", the header is
	// "v1," + base64 of the HMAC-SHA256.
	if h.Get("webhook-id") != r.DeliveryID {
		t.Errorf("webhook-id = %q, want the delivery id %q", h.Get("webhook-id"), r.DeliveryID)
	}
	if got := h.Get("webhook-timestamp"); got != "1772368496" || h.Get("X-Service-Timestamp") != got {
		t.Errorf("webhook-timestamp = %q, X-Service-Timestamp = %q, want 1772368496", got, h.Get("X-Service-Timestamp"))
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(r.Secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	content := h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(r.Body)
	mac = hmac.New(sha256.New, key)
	mac.Write([]byte(content))
	if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); h.Get("webhook-signature") != want {
		t.Errorf("webhook-signature = %q, want %q", h.Get("webhook-signature"), want)
	}
}

// TestStandardSignatureReferenceVector reproduces the test vector published
// with the Standard Webhooks reference libraries (svix, standard-webhooks):
// the only check here that proves interoperability rather than consistency.
func TestStandardSignatureReferenceVector(t *testing.T) {
	got, err := StandardSignature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("StandardSignature = %q, want %q", got, want)
	}
}

func TestSignatureKeysWithWholeSecretString(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	got := Signature(secret, body)
	if !strings.HasPrefix(got, "sha256=") || len(got) != len("sha256=")+64 || strings.ToLower(got) != got {
		t.Fatalf("Signature = %q, want sha256= and 64 lowercase hex digits", got)
	}
	if got == Signature(strings.TrimPrefix(secret, "whsec_"), body) {
		t.Error("Signature ignores the whsec_ prefix; it must key with the whole string")
	}
	if got == Signature(secret, append(body, ' ')) {
		t.Error("Signature does not depend on the body")
	}
}

func TestNewSecret(t *testing.T) {
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Error("two secrets are equal")
	}
	enc, ok := strings.CutPrefix(a, "whsec_")
	if !ok {
		t.Fatalf("secret %q lacks the whsec_ prefix", a)
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(raw) != 32 {
		t.Fatalf("secret %q: decoded %d bytes, err %v; want 32 bytes", a, len(raw), err)
	}
	if _, err := StandardSignature(a, "id", time.Unix(1, 0), nil); err != nil {
		t.Errorf("StandardSignature rejects a NewSecret secret: %v", err)
	}
}

func TestStandardSignatureMalformedSecret(t *testing.T) {
	for _, secret := range []string{
		"",
		"whsec_",
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // no prefix
		"whsec_not base64!",
		"whsec_AAA",    // missing padding
		"whsec_AA==\n", // trailing newline
	} {
		if _, err := StandardSignature(secret, "id", time.Unix(1, 0), nil); !errors.Is(err, ErrMalformedSecret) {
			t.Errorf("StandardSignature(%q): err = %v, want ErrMalformedSecret", secret, err)
		}
		r := Request{Secret: secret, Event: "e", EventID: "e1", DeliveryID: "d1", Attempt: 1, Timestamp: time.Unix(1, 0)}
		if _, err := r.Headers(); !errors.Is(err, ErrMalformedSecret) {
			t.Errorf("Headers with secret %q: err = %v, want ErrMalformedSecret", secret, err)
		}
	}
}

func TestHeadersInvalidRequest(t *testing.T) {
	for name, mutate := range map[string]func(*Request){
		"empty event":         func(r *Request) { r.Event = "" },
		"empty event id":      func(r *Request) { r.EventID = "" },
		"empty delivery id":   func(r *Request) { r.DeliveryID = "" },
		"newline in delivery": func(r *Request) { r.DeliveryID = "d1\r\nX-Evil: 1" },
		"non-ASCII event":     func(r *Request) { r.Event = "message.sent\u00e9" },
		"padded event id":     func(r *Request) { r.EventID = " evt" },
		"long delivery id":    func(r *Request) { r.DeliveryID = strings.Repeat("a", 1025) },
		"attempt 0":           func(r *Request) { r.Attempt = 0 },
		"zero timestamp":      func(r *Request) { r.Timestamp = time.Time{} },
	} {
		t.Run(name, func(t *testing.T) {
			r := goldenRequest(t)
			mutate(&r)
			if _, err := r.Headers(); !errors.Is(err, ErrInvalidRequest) {
				t.Errorf("err = %v, want ErrInvalidRequest", err)
			}
		})
	}
}

func TestHeadersAttemptAndTimestamp(t *testing.T) {
	r := goldenRequest(t)
	r.Attempt = 10
	r.Timestamp = time.Unix(1700000000, 999_999_999).In(time.FixedZone("x", 5*3600))
	h, err := r.Headers()
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("X-Service-Attempt") != "10" {
		t.Errorf("X-Service-Attempt = %q, want 10", h.Get("X-Service-Attempt"))
	}
	if got := h.Get("Webhook-Timestamp"); got != strconv.Itoa(1700000000) {
		t.Errorf("Webhook-Timestamp = %q, want 1700000000 (unix seconds, zone-independent)", got)
	}
}

func BenchmarkHeaders(b *testing.B) {
	r := Request{
		Secret:     "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		Event:      "message.status",
		EventID:    "evt_1",
		DeliveryID: "dlv_1",
		Attempt:    1,
		Timestamp:  time.Unix(1700000000, 0),
		Body:       make([]byte, 1024),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Headers(); err != nil {
			b.Fatal(err)
		}
	}
}
