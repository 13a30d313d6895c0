package onboarding_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/server/onboarding"
	"gateway/store"
	"gateway/store/storetest"
)

const (
	appID     = "1234567890"
	appSecret = "app-secret-for-tests"
)

type fixture struct {
	t       *testing.T
	sim     *simulator.Simulator
	client  *whatsapp.Client
	st      *store.Store
	svc     *onboarding.Service
	offset  atomic.Int64 // added to the simulator's clock
	mu      sync.Mutex
	synced  []int64
	changed []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t}
	start := time.Now()
	f.sim = simulator.New(simulator.Config{AppID: appID, AppSecret: appSecret,
		Clock: func() time.Time { return start.Add(time.Since(start) + time.Duration(f.offset.Load())) }})
	t.Cleanup(func() { _ = f.sim.Close() })
	base, err := f.sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.client = whatsapp.NewClient(base+"/v23.0", nil)
	f.st = storetest.New(t)
	f.svc = &onboarding.Service{
		Store: f.st, Platform: f.client, AppID: appID, AppSecret: appSecret,
		SyncTemplates: func(ctx context.Context, accountID int64) error {
			f.mu.Lock()
			f.synced = append(f.synced, accountID)
			f.mu.Unlock()
			return nil
		},
		Changed: func(ids ...string) {
			f.mu.Lock()
			f.changed = append(f.changed, ids...)
			f.mu.Unlock()
		},
	}
	return f
}

func (f *fixture) account(name string) int64 {
	f.t.Helper()
	a, err := f.st.CreateAccount(context.Background(), name, name+"@example.com", fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))
	if err != nil {
		f.t.Fatal(err)
	}
	return a.ID
}

func stepError(t *testing.T, err error, step string) *onboarding.StepError {
	t.Helper()
	var se *onboarding.StepError
	if !errors.As(err, &se) || se.Step != step {
		t.Fatalf("want a failure of step %q, got %v", step, err)
	}
	if !strings.HasPrefix(err.Error(), step+": ") {
		t.Fatalf("error text %q does not name the step", err)
	}
	return se
}

func TestConnectWithCode(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	acct := f.account("acme")
	su := f.sim.Signup("Acme Shoes")

	c, err := f.svc.ConnectWithCode(ctx, acct, su.Code, su.WabaID, su.PhoneNumberID)
	if err != nil {
		t.Fatal(err)
	}
	digits := whatsapp.Digits(su.DisplayPhoneNumber)
	if c.AccountID != acct || c.WabaID != su.WabaID || c.PhoneNumberID != su.PhoneNumberID || c.PhoneNumber != digits ||
		c.DisplayName != "Acme Shoes" || c.AccessToken != su.AccessToken {
		t.Fatalf("connection = %+v (signup %+v)", c, su)
	}
	d, err := f.st.ConnectionDetailsByAccount(ctx, acct)
	if err != nil || d.QualityRating != "GREEN" || d.MessagingLimit != "TIER_1K" || d.AccessToken != su.AccessToken {
		t.Fatalf("stored details = %+v, %v", d, err)
	}
	var sealed []byte
	if err := f.st.DB().GetContext(ctx, &sealed, `SELECT access_token FROM connections WHERE account_id = $1`, acct); err != nil ||
		strings.Contains(string(sealed), su.AccessToken) {
		t.Fatalf("the token is not sealed at rest: %v", err)
	}
	st, _ := f.sim.Onboarding(su.PhoneNumberID)
	if !st.Registered || !st.AppSubscribed || len(st.PIN) != 6 {
		t.Fatalf("platform state after connect: %+v", st)
	}
	pin, err := f.st.NumberPIN(ctx, su.PhoneNumberID, "000000")
	if err != nil || pin != st.PIN {
		t.Fatalf("stored pin %q (%v), platform pin %q", pin, err, st.PIN)
	}
	if len(f.synced) != 1 || f.synced[0] != acct {
		t.Fatalf("templates synced for %v", f.synced)
	}
	if len(f.changed) == 0 || f.changed[0] != su.PhoneNumberID {
		t.Fatalf("changed = %v", f.changed)
	}
	// The connected number sends.
	if _, err := f.client.SendText(ctx, c.AccessToken, c.PhoneNumberID, "15551234567", "hello"); err != nil {
		t.Fatalf("send through the connected number: %v", err)
	}

	// Repeating the whole connect with the same (already used) code succeeds: the token is
	// remembered and the number is registered again with the same pin.
	again, err := f.svc.ConnectWithCode(ctx, acct, su.Code, su.WabaID, su.PhoneNumberID)
	if err != nil || again.PhoneNumberID != su.PhoneNumberID {
		t.Fatalf("repeated connect: %+v, %v", again, err)
	}
	if st, _ := f.sim.Onboarding(su.PhoneNumberID); st.Registrations != 2 || st.PIN != pin {
		t.Fatalf("after the repeat: %+v", st)
	}

	// A second sign-up replaces the account's number with a fresh one.
	su2 := f.sim.Signup("Acme Shoes 2")
	if su2.WabaID == su.WabaID || su2.PhoneNumberID == su.PhoneNumberID {
		t.Fatalf("sign-up did not create a fresh business: %+v %+v", su, su2)
	}
	c2, err := f.svc.ConnectWithCode(ctx, acct, su2.Code, su2.WabaID, su2.PhoneNumberID)
	if err != nil || c2.PhoneNumberID != su2.PhoneNumberID {
		t.Fatalf("reconnect: %+v, %v", c2, err)
	}
	if got := f.changed[len(f.changed)-2:]; got[0] != su2.PhoneNumberID || got[1] != su.PhoneNumberID {
		t.Fatalf("a replaced number is reported as changed too: %v", f.changed)
	}
}

func TestConnectWithCodeFailures(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	acct := f.account("acme")

	// An expired code.
	su := f.sim.Signup("")
	f.offset.Add(int64(simulator.CodeTTL + time.Second))
	_, err := f.svc.ConnectWithCode(ctx, acct, su.Code, su.WabaID, su.PhoneNumberID)
	se := stepError(t, err, onboarding.StepExchangeCode)
	var pe *whatsapp.Error
	if !errors.As(se, &pe) || pe.Code != 100 || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired code: %v", err)
	}

	// A number whose two-step pin was set elsewhere.
	n := f.sim.NewBusiness("Pinned")
	n.PIN = "999999"
	f.sim.AddNumber(n)
	code, err := f.sim.IssueCode(n.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.ConnectWithCode(ctx, acct, code, n.WabaID, n.PhoneNumberID)
	stepError(t, err, onboarding.StepRegister)
	if !strings.HasPrefix(err.Error(), "registering the number: (#133005) Two step verification PIN Mismatch") {
		t.Fatalf("wrong pin: %v", err)
	}
	if _, err := f.st.ConnectionByAccount(ctx, acct); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("nothing is saved after a failed step: %v", err)
	}

	// An unknown phone number id.
	su = f.sim.Signup("")
	_, err = f.svc.ConnectWithCode(ctx, acct, su.Code, su.WabaID, "100000000000999")
	se = stepError(t, err, onboarding.StepReadNumber)
	if !errors.As(se, &pe) || pe.Code != 100 || pe.Subcode != 33 {
		t.Fatalf("unknown number: %v", err)
	}
	// The retry with the right id resumes after the exchange (the code was used).
	if _, err := f.svc.ConnectWithCode(ctx, acct, su.Code, su.WabaID, su.PhoneNumberID); err != nil {
		t.Fatalf("retry: %v", err)
	}

	// Another workspace cannot replay a code this one exchanged.
	other := f.account("other")
	_, err = f.svc.ConnectWithCode(ctx, other, su.Code, su.WabaID, su.PhoneNumberID)
	stepError(t, err, onboarding.StepExchangeCode)

	// The number of another workspace.
	code, _ = f.sim.IssueCode(su.AccessToken)
	_, err = f.svc.ConnectWithCode(ctx, other, code, su.WabaID, su.PhoneNumberID)
	stepError(t, err, onboarding.StepSave)
	if !errors.Is(err, onboarding.ErrNumberTaken) || !strings.Contains(err.Error(), "another workspace") {
		t.Fatalf("taken number: %v", err)
	}

	// A failed template sync keeps the connection.
	f.svc.SyncTemplates = func(context.Context, int64) error { return errors.New("boom") }
	su = f.sim.Signup("")
	c, err := f.svc.ConnectWithCode(ctx, other, su.Code, su.WabaID, su.PhoneNumberID)
	stepError(t, err, onboarding.StepSyncTemplates)
	if c.PhoneNumberID != su.PhoneNumberID {
		t.Fatalf("connection with a failed sync: %+v", c)
	}
	if got, err := f.st.ConnectionByAccount(ctx, other); err != nil || got.PhoneNumberID != su.PhoneNumberID {
		t.Fatalf("saved: %+v, %v", got, err)
	}
}

func TestConnectWithToken(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	acct := f.account("acme")
	n := simulator.Number{PhoneNumberID: "106540352242922", WabaID: "102290129340398", DisplayPhoneNumber: "+1 555-078-3881",
		AccessToken: "system-user-token", VerifiedName: "Acme", QualityRating: "YELLOW"}
	f.sim.AddNumber(n)
	// Another WABA the same token can see.
	f.sim.AddNumber(simulator.Number{PhoneNumberID: "106540352242923", WabaID: "102290129340399", AccessToken: "system-user-token"})

	_, err := f.svc.ConnectWithToken(ctx, acct, "102290129340399", n.PhoneNumberID, n.AccessToken)
	stepError(t, err, onboarding.StepListNumbers)
	if !errors.Is(err, onboarding.ErrNumberNotInWABA) {
		t.Fatalf("number of another WABA: %v", err)
	}
	_, err = f.svc.ConnectWithToken(ctx, acct, n.WabaID, n.PhoneNumberID, "wrong-token")
	se := stepError(t, err, onboarding.StepReadNumber)
	var pe *whatsapp.Error
	if !errors.As(se, &pe) || pe.Code != 190 {
		t.Fatalf("wrong token: %v", err)
	}
	if _, err := f.st.ConnectionByAccount(ctx, acct); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("nothing is saved for an invalid token: %v", err)
	}

	c, err := f.svc.ConnectWithToken(ctx, acct, n.WabaID, n.PhoneNumberID, " "+n.AccessToken+" ")
	if err != nil {
		t.Fatal(err)
	}
	if c.PhoneNumber != "15550783881" || c.DisplayName != "Acme" || c.AccessToken != n.AccessToken {
		t.Fatalf("connection = %+v", c)
	}
	if d, _ := f.st.ConnectionDetailsByAccount(ctx, acct); d.QualityRating != "YELLOW" {
		t.Fatalf("details = %+v", d)
	}
	if st, _ := f.sim.Onboarding(n.PhoneNumberID); !st.AppSubscribed || st.Registrations != 0 {
		t.Fatalf("platform state: %+v", st)
	}

	// A plain ConnectNumber of another number does not show the previous number's details.
	if _, err := f.st.ConnectNumber(ctx, store.Connection{AccountID: acct, WabaID: "w", PhoneNumberID: "p2", PhoneNumber: "15550000000",
		DisplayName: "x", AccessToken: "t"}); err != nil {
		t.Fatal(err)
	}
	if d, _ := f.st.ConnectionDetailsByAccount(ctx, acct); d.QualityRating != "" || d.MessagingLimit != "" {
		t.Fatalf("stale details = %+v", d)
	}

	if err := f.svc.Disconnect(ctx, acct); err != nil {
		t.Fatal(err)
	}
	if f.changed[len(f.changed)-1] != "p2" {
		t.Fatalf("disconnect reported %v", f.changed)
	}
	if err := f.svc.Disconnect(ctx, acct); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second disconnect: %v", err)
	}
}

func TestConnectWithCodeChecksTheWABA(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	acct := f.account("acme")
	su := f.sim.Signup("Acme")
	// Another WABA of the same business (the same token sees it).
	f.sim.AddNumber(simulator.Number{PhoneNumberID: "100000000000777", WabaID: "200000000000777", AccessToken: su.AccessToken})
	_, err := f.svc.ConnectWithCode(ctx, acct, su.Code, "200000000000777", su.PhoneNumberID)
	stepError(t, err, onboarding.StepListNumbers)
	if !errors.Is(err, onboarding.ErrNumberNotInWABA) {
		t.Fatalf("mismatched WABA: %v", err)
	}
	if st, _ := f.sim.Onboarding(su.PhoneNumberID); st.AppSubscribed || st.Registered {
		t.Fatalf("nothing may happen on the platform after a failed check: %+v", st)
	}
}
