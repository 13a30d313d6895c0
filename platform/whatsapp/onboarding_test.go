package whatsapp_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
)

const (
	simAppID     = "1234567890"
	simAppSecret = "sim-app-secret"
)

// startSim starts a simulator and returns it with a client for its Graph root.
func startSim(t *testing.T, clock func() time.Time) (*simulator.Simulator, *whatsapp.Client) {
	t.Helper()
	sim := simulator.New(simulator.Config{AppID: simAppID, AppSecret: simAppSecret, Clock: clock})
	t.Cleanup(func() { _ = sim.Close() })
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return sim, whatsapp.NewClient(base+"/v23.0", nil)
}

func graphError(t *testing.T, err error) *whatsapp.Error {
	t.Helper()
	var ge *whatsapp.Error
	if !errors.As(err, &ge) {
		t.Fatalf("want a *whatsapp.Error, got %v", err)
	}
	return ge
}

func TestOnboardingAgainstSimulator(t *testing.T) {
	ctx := context.Background()
	sim, c := startSim(t, nil)
	su := sim.Signup("Acme Shoes")

	tok, err := c.ExchangeCode(ctx, simAppID, simAppSecret, su.Code)
	if err != nil {
		t.Fatal(err)
	}
	if tok != su.AccessToken {
		t.Fatalf("token = %q, want the new business's %q", tok, su.AccessToken)
	}
	// The code is single use.
	_, err = c.ExchangeCode(ctx, simAppID, simAppSecret, su.Code)
	if ge := graphError(t, err); ge.Code != 100 || ge.Type != "OAuthException" || !strings.Contains(ge.Message, "used") {
		t.Fatalf("second exchange: %+v", ge)
	}

	n, err := c.PhoneNumber(ctx, tok, su.PhoneNumberID)
	if err != nil {
		t.Fatal(err)
	}
	if n.ID != su.PhoneNumberID || n.DisplayPhoneNumber != su.DisplayPhoneNumber || n.VerifiedName != "Acme Shoes" ||
		n.QualityRating != "GREEN" || n.MessagingLimitTier != "TIER_1K" || n.ThroughputLevel != "STANDARD" {
		t.Fatalf("number = %+v", n)
	}
	if want := whatsapp.Digits(su.DisplayPhoneNumber); n.Digits != want || len(want) != 11 || !strings.HasPrefix(want, "1555") {
		t.Fatalf("digits = %q (display %q)", n.Digits, su.DisplayPhoneNumber)
	}

	list, err := c.PhoneNumbers(ctx, tok, su.WabaID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != su.PhoneNumberID || list[0].Digits != n.Digits {
		t.Fatalf("phone numbers = %+v", list)
	}

	// A fresh number cannot send before it is registered.
	_, err = c.SendText(ctx, tok, su.PhoneNumberID, "15551234567", "hi")
	if ge := graphError(t, err); ge.Code != 133010 {
		t.Fatalf("send before register: %+v", ge)
	}
	if err := c.SubscribeApp(ctx, tok, su.WabaID); err != nil {
		t.Fatal(err)
	}
	if err := c.SubscribeApp(ctx, tok, su.WabaID); err != nil {
		t.Fatalf("subscribing again: %v", err)
	}
	if err := c.RegisterNumber(ctx, tok, su.PhoneNumberID, "123456"); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterNumber(ctx, tok, su.PhoneNumberID, "123456"); err != nil {
		t.Fatalf("registering again with the same pin: %v", err)
	}
	err = c.RegisterNumber(ctx, tok, su.PhoneNumberID, "654321")
	if ge := graphError(t, err); ge.Code != 133005 || !strings.Contains(ge.Error(), "(#133005)") {
		t.Fatalf("wrong pin: %+v", ge)
	}
	st, _ := sim.Onboarding(su.PhoneNumberID)
	if !st.Registered || st.PIN != "123456" || !st.AppSubscribed || st.Registrations != 2 {
		t.Fatalf("simulator state = %+v", st)
	}
	if _, err := c.SendText(ctx, tok, su.PhoneNumberID, "15551234567", "hi"); err != nil {
		t.Fatalf("send after register: %v", err)
	}
	ts, err := c.ListTemplates(ctx, tok, su.WabaID)
	if err != nil || len(ts) == 0 {
		t.Fatalf("the new WABA has the standard templates: %d, %v", len(ts), err)
	}
}

func TestOnboardingErrors(t *testing.T) {
	ctx := context.Background()
	var offset atomic.Int64 // the simulator's clock runs in its handlers' goroutines
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sim, c := startSim(t, func() time.Time { return start.Add(time.Duration(offset.Load())) })
	su := sim.Signup("")

	if _, err := c.ExchangeCode(ctx, "999", simAppSecret, su.Code); graphError(t, err).Code != 101 {
		t.Fatalf("wrong app id: %v", err)
	}
	_, err := c.ExchangeCode(ctx, simAppID, "wrong-secret", su.Code)
	if ge := graphError(t, err); ge.Code != 1 || strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("wrong secret: %v", err)
	}
	offset.Add(int64(simulator.CodeTTL))
	if _, err := c.ExchangeCode(ctx, simAppID, simAppSecret, su.Code); graphError(t, err).Code != 100 ||
		!strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired code: %v", err)
	}
	if _, err := c.ExchangeCode(ctx, simAppID, simAppSecret, "nonsense"); graphError(t, err).Code != 100 {
		t.Fatalf("unknown code: %v", err)
	}
	if _, err := c.ExchangeCode(ctx, simAppID, "", "x"); !errors.Is(err, whatsapp.ErrInvalidArgument) {
		t.Fatalf("empty secret: %v", err)
	}

	_, err = c.PhoneNumber(ctx, su.AccessToken, "100999")
	if ge := graphError(t, err); ge.Code != 100 || ge.Subcode != 33 {
		t.Fatalf("unknown number: %+v", ge)
	}
	_, err = c.PhoneNumbers(ctx, su.AccessToken, "200999")
	if ge := graphError(t, err); ge.Code != 100 || ge.Subcode != 33 {
		t.Fatalf("unknown WABA: %+v", ge)
	}
	other := sim.Signup("Other")
	_, err = c.PhoneNumbers(ctx, su.AccessToken, other.WabaID)
	if ge := graphError(t, err); ge.Code != 190 || ge.HTTPStatus != 401 {
		t.Fatalf("another business's WABA: %+v", ge)
	}
	if err := c.SubscribeApp(ctx, "bogus", su.WabaID); graphError(t, err).Code != 190 {
		t.Fatalf("bogus token: %v", err)
	}
	if err := c.RegisterNumber(ctx, su.AccessToken, su.PhoneNumberID, "12345"); !errors.Is(err, whatsapp.ErrInvalidArgument) {
		t.Fatalf("5-digit pin: %v", err)
	}
	for i := range simulator.RegisterLimit {
		if err := c.RegisterNumber(ctx, su.AccessToken, su.PhoneNumberID, "111111"); err != nil {
			t.Fatalf("registration %d: %v", i+1, err)
		}
	}
	if err := c.RegisterNumber(ctx, su.AccessToken, su.PhoneNumberID, "111111"); graphError(t, err).Code != 133016 {
		t.Fatalf("registration %d: %v", simulator.RegisterLimit+1, err)
	}
	offset.Add(int64(simulator.RegisterWindow))
	if err := c.RegisterNumber(ctx, su.AccessToken, su.PhoneNumberID, "111111"); err != nil {
		t.Fatalf("a week later: %v", err)
	}
}
