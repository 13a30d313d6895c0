package store_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"strconv"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

var (
	oldKey = []byte("0123456789abcdef0123456789abcdef") // storetest.TestKey
	newKey = []byte("fedcba9876543210fedcba9876543210")
)

// secretsFixture is two accounts, each with a connected number and a webhook endpoint.
type secretsFixture struct {
	a, b       store.Account
	wa, wb     store.WebhookEndpoint
	tokA, tokB string
}

func newSecretsFixture(t *testing.T, s *store.Store) secretsFixture {
	t.Helper()
	ctx := context.Background()
	f := secretsFixture{a: whAccount(t, s, "alpha"), b: whAccount(t, s, "beta"), tokA: "token-of-alpha", tokB: "token-of-beta"}
	for _, c := range []store.Connection{
		{AccountID: f.a.ID, WabaID: "wa", PhoneNumberID: "pa", PhoneNumber: "15550000001", DisplayName: "A", AccessToken: f.tokA},
		{AccountID: f.b.ID, WabaID: "wb", PhoneNumberID: "pb", PhoneNumber: "15550000002", DisplayName: "B", AccessToken: f.tokB},
	} {
		if _, err := s.ConnectNumber(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if f.wa, err = s.CreateWebhookEndpoint(ctx, f.a.ID, "https://a.example/h", "whsec_alpha"); err != nil {
		t.Fatal(err)
	}
	if f.wb, err = s.CreateWebhookEndpoint(ctx, f.b.ID, "https://b.example/h", "whsec_beta"); err != nil {
		t.Fatal(err)
	}
	return f
}

// endpointSecrets claims one delivery per endpoint (an event for each account) and returns the
// opened secret, or the error, by endpoint id.
func endpointSecrets(t *testing.T, s *store.Store, accounts ...int64) map[int64]store.ClaimedDelivery {
	t.Helper()
	ctx := context.Background()
	for _, id := range accounts {
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO events (account_id, type, data) VALUES ($1, 'contact.created', '{}')`, id); err != nil {
			t.Fatal(err)
		}
	}
	claims, err := s.ClaimDueDeliveries(ctx, time.Time{}, 100, time.Minute, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]store.ClaimedDelivery{}
	for _, c := range claims {
		out[c.EndpointID] = c
	}
	return out
}

// A sealed secret is bound to its row (AES-GCM associated data: table, account, id): copied
// into another row, by someone who can write the database but does not have the key, it does
// not open.
func TestSealedSecretsBindTheirRow(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	f := newSecretsFixture(t, s)
	if c, err := s.ConnectionByAccount(ctx, f.b.ID); err != nil || c.AccessToken != f.tokB {
		t.Fatalf("B's own token: %v %q", err, c.AccessToken)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE connections SET access_token = (SELECT access_token FROM connections WHERE account_id = $1)
		WHERE account_id = $2`, f.a.ID, f.b.ID); err != nil {
		t.Fatal(err)
	}
	if c, err := s.ConnectionByAccount(ctx, f.b.ID); err == nil {
		t.Fatalf("A's token copied into B's row opened: %q", c.AccessToken)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE id = $1)
		WHERE id = $2`, f.wa.ID, f.wb.ID); err != nil {
		t.Fatal(err)
	}
	// Two-step pins are bound to their number.
	if _, err := s.NumberPIN(ctx, "pa", "111111"); err != nil {
		t.Fatal(err)
	}
	if pin, err := s.NumberPIN(ctx, "pb", "222222"); err != nil || pin != "222222" {
		t.Fatalf("pin: %q %v", pin, err)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE number_pins SET pin = (SELECT pin FROM number_pins WHERE phone_number_id = 'pa')
		WHERE phone_number_id = 'pb'`); err != nil {
		t.Fatal(err)
	}
	if pin, err := s.NumberPIN(ctx, "pb", "333333"); err == nil {
		t.Fatalf("pa's pin copied to pb opened: %q", pin)
	}
	got := endpointSecrets(t, s, f.a.ID, f.b.ID)
	if c := got[f.wa.ID]; c.SecretErr != nil || c.Secret != "whsec_alpha" {
		t.Fatalf("A's own secret: %v %q", c.SecretErr, c.Secret)
	}
	if c := got[f.wb.ID]; c.SecretErr == nil {
		t.Fatalf("A's secret copied into B's endpoint opened: %q", c.Secret)
	}
}

// Rotation: a store with a new key and the old one as previous reads everything; ResealSecrets
// re-seals every secret under the new key, after which the old key is no longer needed (and no
// longer works).
func TestSecretKeyRotation(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	f := newSecretsFixture(t, s)

	if _, err := store.New(s.DB(), newKey); err != nil {
		t.Fatal(err)
	}
	onlyNew, _ := store.New(s.DB(), newKey)
	if _, err := onlyNew.ConnectionByAccount(ctx, f.a.ID); err == nil {
		t.Fatal("the new key alone opened a secret sealed with the old one")
	}
	rotating, err := store.New(s.DB(), newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rotating.ConnectionByAccount(ctx, f.a.ID); err != nil || c.AccessToken != f.tokA {
		t.Fatalf("read with the previous key: %v %q", err, c.AccessToken)
	}
	res, err := rotating.ResealSecrets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Connections != 2 || res.WebhookEndpoints != 2 || len(res.Unreadable) != 0 {
		t.Fatalf("reseal: %+v", res)
	}
	onlyNew, _ = store.New(s.DB(), newKey)
	for id, tok := range map[int64]string{f.a.ID: f.tokA, f.b.ID: f.tokB} {
		if c, err := onlyNew.ConnectionByAccount(ctx, id); err != nil || c.AccessToken != tok {
			t.Fatalf("after rotation, account %d: %v %q", id, err, c.AccessToken)
		}
	}
	got := endpointSecrets(t, onlyNew, f.a.ID, f.b.ID)
	if got[f.wa.ID].Secret != "whsec_alpha" || got[f.wb.ID].Secret != "whsec_beta" {
		t.Fatalf("after rotation, endpoints: %+v", got)
	}
	oldOnly, _ := store.New(s.DB(), oldKey)
	if _, err := oldOnly.ConnectionByAccount(ctx, f.a.ID); err == nil {
		t.Fatal("the old key still opens a re-sealed secret")
	}
	// Nothing left to do: a second run re-seals again and still reads everything.
	if res, err := onlyNew.ResealSecrets(ctx); err != nil || res.Connections != 2 || len(res.Unreadable) != 0 {
		t.Fatalf("second reseal: %+v %v", res, err)
	}
}

// Secrets sealed before row binding existed (nonce || ciphertext, no associated data) stay
// readable, and ResealSecrets upgrades them to the bound format. One that no key opens is
// reported, not fatal.
func TestLegacySealedSecrets(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	f := newSecretsFixture(t, s)
	block, _ := aes.NewCipher(oldKey)
	aead, _ := cipher.NewGCM(block)
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	legacy := aead.Seal(nonce, nonce, []byte("legacy-token"), nil)
	if _, err := s.DB().ExecContext(ctx, `UPDATE connections SET access_token = $2 WHERE account_id = $1`, f.a.ID, legacy); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, `UPDATE connections SET access_token = '\x00112233'::bytea WHERE account_id = $1`, f.b.ID); err != nil {
		t.Fatal(err)
	}
	if c, err := s.ConnectionByAccount(ctx, f.a.ID); err != nil || c.AccessToken != "legacy-token" {
		t.Fatalf("legacy: %v %q", err, c.AccessToken)
	}
	res, err := s.ResealSecrets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Connections != 1 || len(res.Unreadable) != 1 || res.Unreadable[0] != "connections account "+strconv.FormatInt(f.b.ID, 10) {
		t.Fatalf("reseal: %+v", res)
	}
	var sealed []byte
	s.DB().GetContext(ctx, &sealed, `SELECT access_token FROM connections WHERE account_id = $1`, f.a.ID)
	if sealed[0] != 1 || len(sealed) != 1+12+len("legacy-token")+16 {
		t.Fatalf("not re-sealed in the bound format: % x", sealed)
	}
	if c, err := s.ConnectionByAccount(ctx, f.a.ID); err != nil || c.AccessToken != "legacy-token" {
		t.Fatalf("after reseal: %v %q", err, c.AccessToken)
	}
}
