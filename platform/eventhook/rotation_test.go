package eventhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// During a rotation's overlap Webhook-Signature carries the new secret's signature, then the
// previous one's, space-separated; X-Service-Signature is made with the new secret only.
func TestHeadersSignWithBothSecretsDuringRotation(t *testing.T) {
	newSecret, _ := NewSecret()
	oldSecret, _ := NewSecret()
	r := Request{URL: "https://example.com/h", Secret: newSecret, PreviousSecret: oldSecret, Event: "webhook.test",
		EventID: "ev_1", DeliveryID: "del_1", Attempt: 1, Timestamp: time.Unix(1700000000, 0), Body: []byte(`{"a":1}`)}
	h, err := r.Headers()
	if err != nil {
		t.Fatal(err)
	}
	sigs := strings.Split(h.Get(HeaderWebhookSignature), " ")
	wantNew, _ := StandardSignature(newSecret, "del_1", r.Timestamp, r.Body)
	wantOld, _ := StandardSignature(oldSecret, "del_1", r.Timestamp, r.Body)
	if len(sigs) != 2 || sigs[0] != wantNew || sigs[1] != wantOld {
		t.Fatalf("webhook-signature = %q, want %q then %q", h.Get(HeaderWebhookSignature), wantNew, wantOld)
	}
	if got := h.Get(HeaderSignature); got != Signature(newSecret, r.Body) {
		t.Fatalf("X-Service-Signature = %q, want the new secret's", got)
	}
	r.PreviousSecret = ""
	h, _ = r.Headers()
	if got := h.Get(HeaderWebhookSignature); got != wantNew {
		t.Fatalf("without a rotation webhook-signature = %q, want %q", got, wantNew)
	}
	r.PreviousSecret = "not-a-secret"
	if _, err := r.Headers(); err == nil {
		t.Fatal("a malformed previous secret was accepted")
	}
}

// X-Service-Timestamp-Signature covers X-Service-Timestamp with the body, so a captured
// delivery cannot be replayed later under a fresh timestamp: "sha256=" + hex HMAC-SHA256 of
// "<X-Service-Timestamp>.<raw body>", keyed with the whole secret string as X-Service-Signature
// is. During a rotation's overlap it carries the previous secret's signature too (space-
// separated, the new one first), and X-Service-Signature-Previous carries X-Service-Signature
// made with the previous secret, for receivers still configured with it. Recomputed here from
// that text, without the package's helpers.
func TestTimestampSignatureAndPreviousSignature(t *testing.T) {
	newSecret, _ := NewSecret()
	oldSecret, _ := NewSecret()
	r := Request{URL: "https://example.com/h", Secret: newSecret, PreviousSecret: oldSecret, Event: "webhook.test",
		EventID: "ev_1", DeliveryID: "del_1", Attempt: 1, Timestamp: time.Unix(1700000000, 0), Body: []byte(`{"a":1}`)}
	sign := func(key, content string) string {
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write([]byte(content))
		return "sha256=" + hex.EncodeToString(mac.Sum(nil))
	}
	h, err := r.Headers()
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("X-Service-Timestamp") != "1700000000" {
		t.Fatalf("X-Service-Timestamp = %q", h.Get("X-Service-Timestamp"))
	}
	want := sign(newSecret, `1700000000.{"a":1}`) + " " + sign(oldSecret, `1700000000.{"a":1}`)
	if got := h.Get("X-Service-Timestamp-Signature"); got != want {
		t.Fatalf("X-Service-Timestamp-Signature during the overlap = %q, want %q", got, want)
	}
	if got := h.Get("X-Service-Signature"); got != sign(newSecret, `{"a":1}`) {
		t.Fatalf("X-Service-Signature = %q, want the new secret's", got)
	}
	if got := h.Get("X-Service-Signature-Previous"); got != sign(oldSecret, `{"a":1}`) {
		t.Fatalf("X-Service-Signature-Previous = %q, want the previous secret's", got)
	}
	// Another timestamp is another signature: an old delivery cannot be passed off as new.
	r2 := r
	r2.Timestamp = r.Timestamp.Add(time.Hour)
	h2, _ := r2.Headers()
	if h2.Get("X-Service-Timestamp-Signature") == h.Get("X-Service-Timestamp-Signature") {
		t.Fatal("the timestamped signature does not depend on the timestamp")
	}
	r.PreviousSecret = ""
	h, _ = r.Headers()
	if got := h.Get("X-Service-Timestamp-Signature"); got != sign(newSecret, `1700000000.{"a":1}`) {
		t.Fatalf("without a rotation X-Service-Timestamp-Signature = %q", got)
	}
	if _, ok := h["X-Service-Signature-Previous"]; ok {
		t.Fatal("X-Service-Signature-Previous sent without a rotation")
	}
}
