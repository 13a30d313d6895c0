package webhook

import (
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
