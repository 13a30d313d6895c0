package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gateway/server/dashboard"
	"gateway/store"
	"gateway/store/storetest"
)

// `gateway admin user create` prints a generated password once and the user can sign in with
// it; `user reset-password` replaces it and ends the user's sessions. Both call the store
// methods the dashboard uses.
func TestAdminUsers(t *testing.T) {
	vars := map[string]string{"DATABASE_URL": storetest.DSN(t), "LOG_LEVEL": "error", "GATEWAY_ENV": "development"}
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
	if err := migrateCmd(mustConfig(t, getenv), []string{"up"}, &bytes.Buffer{}); err != nil && !strings.Contains(err.Error(), "no change") {
		t.Fatal(err)
	}
	acct, err := adminRun("account", "create", "--name", "Ops Ltd", "--email", "ops@example.com")
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(int64(acct["id"].(float64)))
	u, err := adminRun("user", "create", "--account", id, "--email", "Ops@Example.com", "--role", "owner")
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u["password"].(string)
	if len(pw) < dashboard.MinPasswordLen || u["role"] != "owner" || u["password_hash"] != nil {
		t.Fatalf("user create printed %v", u)
	}
	if _, err := adminRun("user", "create", "--account", id, "--email", "ops@example.com"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a second user with the same email (other case): %v", err)
	}
	if _, err := adminRun("user", "create", "--account", "999999", "--email", "x@example.com"); err == nil || !strings.Contains(err.Error(), "no account") {
		t.Fatalf("user for a missing account: %v", err)
	}
	vars["GATEWAY_ADMIN_PASSWORD"] = "short"
	if _, err := adminRun("user", "create", "--account", id, "--email", "y@example.com"); err == nil {
		t.Fatal("a short password was accepted")
	}
	delete(vars, "GATEWAY_ADMIN_PASSWORD")
	db, err := store.Open(context.Background(), storetest.DirectDSN(vars["DATABASE_URL"]), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, _ := store.New(db, mustConfig(t, getenv).SecretKey)
	user, err := st.UserByEmail(context.Background(), "ops@example.com")
	if err != nil || !dashboard.CheckPassword(user.PasswordHash, pw) || dashboard.CheckPassword(user.PasswordHash, pw+"x") {
		t.Fatalf("the printed password does not sign in: %v", err)
	}
	if !strings.HasPrefix(user.PasswordHash, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not argon2id with OWASP parameters", user.PasswordHash)
	}
	ms, _ := st.MembershipsByUser(context.Background(), user.ID)
	if len(ms) != 1 || ms[0].Role != store.RoleOwner {
		t.Fatalf("memberships %+v", ms)
	}
	if err := st.CreateSession(context.Background(), bytes.Repeat([]byte{7}, 32), ms[0].AccountID, user.ID, dashboard.SessionIdle, dashboard.SessionAbsolute); err != nil {
		t.Fatal(err)
	}
	vars["GATEWAY_ADMIN_PASSWORD"] = "a brand new password"
	if _, err := adminRun("user", "reset-password", "--email", "ops@example.com"); err != nil {
		t.Fatal(err)
	}
	delete(vars, "GATEWAY_ADMIN_PASSWORD")
	user, _ = st.UserByEmail(context.Background(), "ops@example.com")
	if !dashboard.CheckPassword(user.PasswordHash, "a brand new password") || dashboard.CheckPassword(user.PasswordHash, pw) {
		t.Fatal("reset-password did not replace the password")
	}
	var sessions int
	db.Get(&sessions, `SELECT count(*) FROM sessions`)
	if sessions != 0 {
		t.Fatalf("%d sessions survive a password reset", sessions)
	}
	if _, err := adminRun("user", "reset-password", "--email", "nobody@example.com"); err == nil {
		t.Fatal("reset for an unknown email succeeded")
	}
	// Operator commands appear in the workspace's audit log, by "operator" (no user).
	k, err := adminRun("key", "create", "--account", id, "--mode", "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adminRun("key", "revoke", "--key", fmt.Sprint(int64(k["id"].(float64)))); err != nil {
		t.Fatal(err)
	}
	es, err := st.AuditLog(context.Background(), ms[0].AccountID, 0, 10)
	want := []string{store.AuditKeyRevoked, store.AuditKeyCreated, store.AuditPasswordChanged, store.AuditUserCreated, store.AuditWorkspaceCreated}
	if err != nil || len(es) != len(want) {
		t.Fatalf("audit log after operator commands: %+v, %v", es, err)
	}
	for i, e := range es {
		if e.Action != want[i] || e.UserID != nil {
			t.Fatalf("audit entry %d: %+v, want %s by the operator", i, e, want[i])
		}
	}
}
