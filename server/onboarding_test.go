package server_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
	"gateway/server"
	"gateway/server/onboarding"
	"gateway/server/servertest"
)

// A number moved from one workspace to another through onboarding is routed to the new one at
// once, although the first webhook put the old tenant in the phone number id cache.
func TestOnboardingMovesTenantAtOnce(t *testing.T) {
	ctx := context.Background()
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	a := pwNewTenant(t, env, "Acme Ltd")
	b := env.NewTenant("Other Co")
	client := whatsapp.NewClient(env.SimURL+"/v23.0", nil)
	svc := &onboarding.Service{Store: env.Store, Platform: client, AppSecret: servertest.AppSecret,
		Changed: env.Server.ForgetTenants}

	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: a.Conn.PhoneNumberID, From: "15551112222", Name: "Ana", Type: "text", Payload: map[string]any{"body": "one"}}); err != nil {
		t.Fatal(err)
	}
	if n := len(pwEvents(t, env, a.Account.ID, "message.received")); n != 1 {
		t.Fatalf("%d events for the first workspace", n)
	}
	if err := svc.Disconnect(ctx, a.Account.ID); err != nil {
		t.Fatal(err)
	}
	c, err := svc.ConnectWithToken(ctx, b.Account.ID, a.Conn.WabaID, a.Conn.PhoneNumberID, a.Conn.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if c.AccountID != b.Account.ID {
		t.Fatalf("connection %+v", c)
	}
	if _, err := env.Sim.InjectInboundMessage(simulator.Inbound{PhoneNumberID: a.Conn.PhoneNumberID, From: "15551112222", Name: "Ana", Type: "text", Payload: map[string]any{"body": "two"}}); err != nil {
		t.Fatal(err)
	}
	if n := len(pwEvents(t, env, b.Account.ID, "message.received")); n != 1 {
		t.Fatalf("%d events for the new workspace (a stale tenant cache?)", n)
	}
	if n := len(pwEvents(t, env, a.Account.ID, "message.received")); n != 1 {
		t.Fatalf("%d events for the old workspace", n)
	}
}

// server.New completes a Service with the server's template sync and cache hooks.
func TestOnboardingWiredByServer(t *testing.T) {
	ctx := context.Background()
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	tn := env.NewTenant("Acme Ltd")
	client := whatsapp.NewClient(env.SimURL+"/v23.0", nil)
	svc := &onboarding.Service{Store: env.Store, Platform: client, AppID: "42", AppSecret: servertest.AppSecret}
	srv, err := server.New(server.Options{}, server.Deps{Store: env.Store, Platform: client, Onboarding: svc})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Onboarding() != svc || svc.Changed == nil || svc.SyncTemplates == nil {
		t.Fatalf("service not wired: %+v", svc)
	}
	su := env.Sim.Signup("Acme")
	code, err := env.Sim.IssueCode(su.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ConnectWithCode(ctx, tn.Account.ID, code, su.WabaID, su.PhoneNumberID); err != nil {
		t.Fatal(err)
	}
	want := len(env.Sim.Templates(su.WabaID))
	if n := pwCount(t, env, `SELECT count(*) FROM templates WHERE account_id = $1`, tn.Account.ID); n != want || want == 0 {
		t.Fatalf("%d templates synced, want %d", n, want)
	}
}

// A phone_number_quality_update webhook refreshes the stored quality rating and messaging limit.
func TestOnboardingQualityUpdate(t *testing.T) {
	ctx := context.Background()
	env := servertest.New(t, servertest.Config{Simulator: &simulator.Config{}})
	tn := env.NewTenant("Acme Ltd")
	client := whatsapp.NewClient(env.SimURL+"/v23.0", nil)
	svc := &onboarding.Service{Store: env.Store, Platform: client, AppID: "42", AppSecret: servertest.AppSecret}
	srv, err := server.New(server.Options{PlatformAppSecret: servertest.AppSecret, PlatformVerifyToken: "v"},
		server.Deps{Store: env.Store, Platform: client, Onboarding: svc})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	setSimWebhookURL(t, env, hs.URL+"/platform/webhook")

	su := env.Sim.Signup("Acme")
	if _, err := svc.ConnectWithCode(ctx, tn.Account.ID, su.Code, su.WabaID, su.PhoneNumberID); err != nil {
		t.Fatal(err)
	}
	if d, err := env.Store.ConnectionDetailsByAccount(ctx, tn.Account.ID); err != nil || d.QualityRating != "GREEN" || d.MessagingLimit != "TIER_1K" {
		t.Fatalf("details after connect: %+v, %v", d, err)
	}
	if err := env.Sim.SetQuality(su.PhoneNumberID, "YELLOW", "TIER_10K", "DOWNGRADE"); err != nil {
		t.Fatal(err)
	}
	if d, err := env.Store.ConnectionDetailsByAccount(ctx, tn.Account.ID); err != nil || d.QualityRating != "YELLOW" || d.MessagingLimit != "TIER_10K" {
		t.Fatalf("details after the quality update: %+v, %v", d, err)
	}
}
