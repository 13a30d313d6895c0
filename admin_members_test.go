package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// `gateway admin member ...` and `invitation ...` manage a workspace's team as the dashboard's
// Members page does: list, change a role and remove members (the last owner is kept), create,
// list, resend and revoke invitations (the link printed once, bound to the email); each change
// is in the workspace's audit log by the operator.
func TestAdminMembersAndInvitations(t *testing.T) {
	vars := map[string]string{"DATABASE_URL": storetest.DSN(t), "LOG_LEVEL": "error", "GATEWAY_PUBLIC_URL": "https://gw.example.com/",
		"GATEWAY_ENV": "development"}
	getenv := func(k string) string { return vars[k] }
	adminRun := func(args ...string) (map[string]any, error) {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), append([]string{"admin"}, args...), getenv, &out, &errOut); err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("admin %v printed %q", args, out.String())
		}
		return m, nil
	}
	must := func(args ...string) map[string]any {
		t.Helper()
		m, err := adminRun(args...)
		if err != nil {
			t.Fatalf("admin %v: %v", args, err)
		}
		return m
	}
	if err := migrateCmd(mustConfig(t, getenv), []string{"up"}, &bytes.Buffer{}); err != nil && !strings.Contains(err.Error(), "no change") {
		t.Fatal(err)
	}
	id := fmt.Sprint(int64(must("account", "create", "--name", "Ops Ltd", "--email", "ops@example.com")["id"].(float64)))
	must("user", "create", "--account", id, "--email", "owner@example.com", "--role", "owner")
	must("user", "create", "--account", id, "--email", "dev@example.com", "--role", "developer")

	if ms := must("member", "list", "--account", id)["members"].([]any); len(ms) != 2 || ms[0].(map[string]any)["email"] != "owner@example.com" {
		t.Fatalf("member list: %v", ms)
	}
	if m := must("member", "role", "--account", id, "--email", "DEV@example.com", "--role", "owner"); m["role"] != "owner" {
		t.Fatalf("member role printed %v", m)
	}
	must("member", "remove", "--account", id, "--email", "dev@example.com")
	if _, err := adminRun("member", "role", "--account", id, "--email", "owner@example.com", "--role", "developer"); err == nil || !strings.Contains(err.Error(), "only owner") {
		t.Fatalf("demoting the last owner: %v", err)
	}
	if _, err := adminRun("member", "remove", "--account", id, "--email", "owner@example.com"); err == nil || !strings.Contains(err.Error(), "only owner") {
		t.Fatalf("removing the last owner: %v", err)
	}
	if _, err := adminRun("member", "remove", "--account", id, "--email", "dev@example.com"); err == nil || !strings.Contains(err.Error(), "not a member") {
		t.Fatalf("removing a non-member: %v", err)
	}
	if _, err := adminRun("member", "role", "--account", id, "--email", "dev@example.com", "--role", "admin"); err == nil {
		t.Fatal("an unknown role was accepted")
	}

	inv := must("invitation", "create", "--account", id, "--email", "new@example.com", "--role", "owner")
	link, _ := inv["link"].(string)
	if !strings.HasPrefix(link, "https://gw.example.com/dashboard/signup?invite=") || inv["email"] != "new@example.com" || inv["role"] != "owner" {
		t.Fatalf("invitation create printed %v", inv)
	}
	if _, err := adminRun("invitation", "create", "--account", id, "--email", "not an email"); err == nil {
		t.Fatal("an invitation for a malformed email was created")
	}
	invID := fmt.Sprint(int64(inv["id"].(float64)))
	if is := must("invitation", "list", "--account", id)["invitations"].([]any); len(is) != 1 {
		t.Fatalf("invitation list: %v", is)
	}
	again := must("invitation", "resend", "--account", id, "--id", invID)
	if again["link"] == link || !strings.Contains(again["link"].(string), "invite=") {
		t.Fatalf("resend printed %v", again)
	}
	must("invitation", "revoke", "--account", id, "--id", invID)
	if is := must("invitation", "list", "--account", id)["invitations"].([]any); len(is) != 0 {
		t.Fatalf("invitation list after the revoke: %v", is)
	}
	if _, err := adminRun("invitation", "revoke", "--account", id, "--id", invID); err == nil || !strings.Contains(err.Error(), "no pending invitation") {
		t.Fatalf("revoking twice: %v", err)
	}

	db, err := store.Open(context.Background(), vars["DATABASE_URL"], 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, _ := store.New(db, mustConfig(t, getenv).SecretKey)
	var acct int64
	fmt.Sscan(id, &acct)
	es, err := st.AuditLog(context.Background(), acct, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		if e.UserID != nil {
			t.Errorf("operator entry %s has a user", e.Action)
		}
		got = append(got, e.Action+" "+e.Target)
	}
	want := []string{"invitation.revoked new@example.com", "invitation.resent new@example.com", "user.invited new@example.com",
		"member.removed dev@example.com", "member.role_changed dev@example.com", "user.created dev@example.com",
		"user.created owner@example.com", "workspace.created Ops Ltd"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("audit log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
