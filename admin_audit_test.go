package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gateway/platform/simulator"
	"gateway/store"
	"gateway/store/storetest"
)

// Every operator command that changes something writes an entry in the workspace's audit log,
// by the operator (no user); the commands that only read write none. Every command of the
// table is one or the other here, so a new command must be classified.
func TestAdminMutatingCommandsAudited(t *testing.T) {
	sim := simulator.New(simulator.Config{})
	seedSimulator(sim)
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	const oldKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	const newKey = "f0e0d0c0b0a090807060504030201000f0e0d0c0b0a090807060504030201000"
	dsn := storetest.DSN(t)
	vars := map[string]string{"DATABASE_URL": dsn, "PLATFORM_BASE_URL": simURL + "/v23.0", "LOG_LEVEL": "error",
		"GATEWAY_ENV": "development", "GATEWAY_SECRET_KEY": oldKey, "GATEWAY_ADMIN_ACCESS_TOKEN": devNumber.AccessToken}
	getenv := func(k string) string { return vars[k] }
	adminRun := func(args ...string) map[string]any {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), append([]string{"admin"}, args...), getenv, &out, &bytes.Buffer{}); err != nil {
			t.Fatalf("admin %v: %v", args, err)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("admin %v printed %q", args, out.String())
		}
		return m
	}
	num := func(m map[string]any, k string) string { return fmt.Sprint(int64(m[k].(float64))) }
	acct := adminRun("account", "create", "--name", "Audit Ltd", "--email", "audit@example.com")
	id := num(acct, "id")
	accountID := int64(acct["id"].(float64))
	st := openTestStore(t, dsn)
	st, _ = store.New(st.DB(), mustParseKey(oldKey))
	ctx := context.Background()
	if _, _, err := st.UpsertContact(ctx, accountID, store.ContactInput{Mobile: "15551234567"}); err != nil {
		t.Fatal(err)
	}

	audited := map[string]bool{}
	var seen int
	// expect runs a command and checks that exactly one new entry with the action, by the
	// operator, was written.
	expect := func(action string, args ...string) map[string]any {
		t.Helper()
		out := adminRun(args...)
		audited[args[0]+" "+args[1]] = true
		es, err := st.AuditLog(ctx, accountID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != seen+1 || es[0].Action != action || es[0].UserID != nil {
			t.Fatalf("admin %v: audit log %+v, want one more entry %s by the operator", args, es, action)
		}
		seen++
		return out
	}
	// account create, run above, wrote the new account's first entry.
	es, err := st.AuditLog(ctx, accountID, 0, 100)
	if err != nil || len(es) != 1 || es[0].Action != store.AuditWorkspaceCreated || es[0].UserID != nil {
		t.Fatalf("after account create: %+v, %v", es, err)
	}
	audited["account create"], seen = true, 1
	expect(store.AuditWorkspaceDeactivated, "account", "deactivate", "--account", id)
	expect(store.AuditWorkspaceActivated, "account", "activate", "--account", id)
	k := expect(store.AuditKeyCreated, "key", "create", "--account", id, "--mode", "test")
	expect(store.AuditKeyRevoked, "key", "revoke", "--key", num(k, "id"))
	expect(store.AuditNumberConnected, "number", "connect", "--account", id, "--waba-id", devNumber.WabaID, "--phone-number-id",
		devNumber.PhoneNumberID, "--phone-number", devNumber.DisplayPhoneNumber, "--display-name", "Audit")
	expect(store.AuditNumberDisconnect, "number", "disconnect", "--account", id)
	expect(store.AuditNumberConnected, "number", "connect-token", "--account", id, "--waba-id", devNumber.WabaID,
		"--phone-number-id", devNumber.PhoneNumberID)
	expect(store.AuditContactBlocked, "contact", "block", "--account", id, "--mobile", "15551234567")
	expect(store.AuditContactUnblocked, "contact", "unblock", "--account", id, "--mobile", "15551234567")
	expect(store.AuditTemplatesSynced, "templates", "sync", "--account", id)
	w := expect(store.AuditWebhookAdded, "webhook", "create", "--account", id, "--url", "https://example.com/h")
	expect(store.AuditWebhookDisabled, "webhook", "disable", "--webhook", num(w, "id"))
	expect(store.AuditWebhookEnabled, "webhook", "enable", "--webhook", num(w, "id"))
	ev, err := st.SendTestEvent(ctx, accountID, int64(w["id"].(float64)), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var deliveryID string
	if err := st.DB().Get(&deliveryID, `SELECT id FROM webhook_deliveries WHERE account_id = $1 AND event_id = $2`, accountID, ev.ID); err != nil {
		t.Fatal(err)
	}
	expect(store.AuditDeliveryRedelivered, "deliveries", "redeliver", "--delivery", deliveryID)
	expect(store.AuditWebhookDeleted, "webhook", "delete", "--webhook", num(w, "id"))
	expect(store.AuditUserCreated, "user", "create", "--account", id, "--email", "ops@audit.example")
	expect(store.AuditPasswordChanged, "user", "reset-password", "--email", "ops@audit.example")
	expect(store.AuditUserCreated, "user", "create", "--account", id, "--email", "dev@audit.example", "--role", "developer")
	expect(store.AuditMemberRoleChanged, "member", "role", "--account", id, "--email", "dev@audit.example", "--role", "owner")
	expect(store.AuditMemberRemoved, "member", "remove", "--account", id, "--email", "dev@audit.example")
	inv := expect(store.AuditUserInvited, "invitation", "create", "--account", id, "--email", "new@audit.example")
	expect(store.AuditInvitationResent, "invitation", "resend", "--account", id, "--id", num(inv, "id"))
	expect(store.AuditInvitationRevoked, "invitation", "revoke", "--account", id, "--id", num(inv, "id"))
	vars["GATEWAY_SECRET_KEY"], vars["GATEWAY_SECRET_KEY_PREVIOUS"] = newKey, oldKey
	expect(store.AuditSecretsResealed, "secrets", "rotate")

	readOnly := map[string]bool{"webhook list": true, "deliveries list": true, "deadletters list": true, "member list": true,
		"invitation list": true}
	for _, c := range adminCommands {
		if !audited[c.name] && !readOnly[c.name] {
			t.Errorf("%q is neither checked for its audit entry here nor listed as read-only: classify it", c.name)
		}
	}
	for name := range readOnly {
		before, _ := st.AuditLog(ctx, accountID, 0, 100)
		args := append(strings.Fields(name), "--account", id)
		if name == "deadletters list" {
			args = strings.Fields(name)
		}
		adminRun(args...)
		if after, _ := st.AuditLog(ctx, accountID, 0, 100); len(after) != len(before) {
			t.Errorf("%s wrote an audit entry", name)
		}
	}
}
