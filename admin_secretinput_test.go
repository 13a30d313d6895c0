package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gateway/server/dashboard"
	"gateway/store"
	"gateway/store/storetest"
)

// Operator commands never take a token or a password as an argument (visible to every local
// user in the process list): the old flags are refused, naming the alternatives, and the value
// is read from a file (--access-token-file, --password-file), standard input ("-") or an
// environment variable instead; giving two sources is refused too.
func TestAdminSecretsNotOnTheCommandLine(t *testing.T) {
	vars := map[string]string{"DATABASE_URL": storetest.DSN(t), "LOG_LEVEL": "error", "GATEWAY_ENV": "development"}
	getenv := func(k string) string { return vars[k] }
	adminRun := func(stdin string, args ...string) (map[string]any, error) {
		adminStdin = strings.NewReader(stdin)
		defer func() { adminStdin = os.Stdin }()
		var out bytes.Buffer
		if err := run(context.Background(), append([]string{"admin"}, args...), getenv, &out, &bytes.Buffer{}); err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("admin %v printed %q", args, out.String())
		}
		return m, nil
	}
	acct, err := adminRun("", "account", "create", "--name", "Sec Ltd", "--email", "sec@example.com")
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(int64(acct["id"].(float64)))
	connect := []string{"number", "connect", "--account", id, "--waba-id", "W", "--phone-number-id", "P1",
		"--phone-number", "15550001234", "--display-name", "Sec"}

	_, err = adminRun("", append(connect, "--access-token", "tok-argv")...)
	if err == nil || !strings.Contains(err.Error(), "process list") || !strings.Contains(err.Error(), "--access-token-file") ||
		!strings.Contains(err.Error(), "GATEWAY_ADMIN_ACCESS_TOKEN") {
		t.Fatalf("--access-token on the command line: %v", err)
	}
	if _, err := adminRun("", connect...); err == nil || !strings.Contains(err.Error(), "--access-token-file") {
		t.Fatalf("no token at all: %v", err)
	}
	st := openTestStore(t, vars["DATABASE_URL"])
	token := func() string {
		c, err := st.ConnectionByAccount(context.Background(), int64(acct["id"].(float64)))
		if err != nil {
			t.Fatal(err)
		}
		return c.AccessToken
	}
	// Standard input, its trailing newline dropped.
	if _, err := adminRun("tok-stdin\n", append(connect, "--access-token-file", "-")...); err != nil || token() != "tok-stdin" {
		t.Fatalf("from standard input: %v, stored %q", err, token())
	}
	file := filepath.Join(t.TempDir(), "token")
	os.WriteFile(file, []byte("tok-file\r\n"), 0o600)
	if _, err := adminRun("", append(connect, "--access-token-file", file)...); err != nil || token() != "tok-file" {
		t.Fatalf("from a file: %v, stored %q", err, token())
	}
	vars["GATEWAY_ADMIN_ACCESS_TOKEN"] = "tok-env"
	if _, err := adminRun("", connect...); err != nil || token() != "tok-env" {
		t.Fatalf("from the environment: %v, stored %q", err, token())
	}
	if _, err := adminRun("", append(connect, "--access-token-file", file)...); err == nil || !strings.Contains(err.Error(), "both") {
		t.Fatalf("a file and the environment: %v", err)
	}
	delete(vars, "GATEWAY_ADMIN_ACCESS_TOKEN")
	os.WriteFile(file, []byte("\n"), 0o600)
	if _, err := adminRun("", append(connect, "--access-token-file", file)...); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty token file: %v", err)
	}

	// Passwords: the same rules; without one a password is generated and printed once.
	if _, err := adminRun("", "user", "create", "--account", id, "--email", "a@example.com", "--password", "correct horse battery"); err == nil ||
		!strings.Contains(err.Error(), "--password-file") || !strings.Contains(err.Error(), "GATEWAY_ADMIN_PASSWORD") {
		t.Fatalf("--password on the command line: %v", err)
	}
	u, err := adminRun("correct horse battery\n", "user", "create", "--account", id, "--email", "a@example.com", "--password-file", "-")
	if err != nil || u["password"] != nil {
		t.Fatalf("user create with the password on standard input: %v, printed %v", err, u)
	}
	if user, err := st.UserByEmail(context.Background(), "a@example.com"); err != nil || !dashboard.CheckPassword(user.PasswordHash, "correct horse battery") {
		t.Fatalf("the password read from standard input does not sign in: %v", err)
	}
	vars["GATEWAY_ADMIN_PASSWORD"] = "another good password"
	if _, err := adminRun("", "user", "reset-password", "--email", "a@example.com"); err != nil {
		t.Fatal(err)
	}
	if user, _ := st.UserByEmail(context.Background(), "a@example.com"); !dashboard.CheckPassword(user.PasswordHash, "another good password") {
		t.Fatal("the password from GATEWAY_ADMIN_PASSWORD was not set")
	}
	vars["GATEWAY_ADMIN_PASSWORD"] = "short"
	if _, err := adminRun("", "user", "reset-password", "--email", "a@example.com"); err == nil {
		t.Fatal("a short password from the environment was accepted")
	}
	delete(vars, "GATEWAY_ADMIN_PASSWORD")
	if u, err := adminRun("", "user", "reset-password", "--email", "a@example.com"); err != nil || len(u["password"].(string)) < dashboard.MinPasswordLen {
		t.Fatalf("a generated password: %v, printed %v", err, u)
	}
}

// openTestStore opens the store on dsn with the development key, closed at cleanup.
func openTestStore(t testing.TB, dsn string) *store.Store {
	t.Helper()
	db, err := store.Open(context.Background(), dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := store.New(db, mustParseKey(defaultSecretKey))
	if err != nil {
		t.Fatal(err)
	}
	return st
}
