package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"gateway/store/storetest"
)

// `gateway serve` refuses the built-in development secrets unless GATEWAY_ENV=development; the
// refusal names every such variable and says how to make a value. It refuses before touching
// the database.
func TestServeRefusesDevelopmentSecrets(t *testing.T) {
	const realKey = "8f1b2c3d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff0"
	cases := []struct {
		name   string
		vars   map[string]string
		refuse []string // variables named; empty: not refused
	}{
		{"all built-in", map[string]string{}, []string{"GATEWAY_SECRET_KEY", "PLATFORM_APP_SECRET", "PLATFORM_VERIFY_TOKEN"}},
		{"the built-in key given explicitly", map[string]string{"GATEWAY_SECRET_KEY": defaultSecretKey,
			"PLATFORM_APP_SECRET": "s3cr3t-app", "PLATFORM_VERIFY_TOKEN": "v3rify"}, []string{"GATEWAY_SECRET_KEY"}},
		{"only the app secret built-in", map[string]string{"GATEWAY_SECRET_KEY": realKey, "PLATFORM_VERIFY_TOKEN": "v3rify"},
			[]string{"PLATFORM_APP_SECRET"}},
		{"development", map[string]string{"GATEWAY_ENV": "development"}, nil},
		{"production values", map[string]string{"GATEWAY_SECRET_KEY": realKey, "PLATFORM_APP_SECRET": "s3cr3t-app",
			"PLATFORM_VERIFY_TOKEN": "v3rify", "PLATFORM_BASE_URL": "https://graph.facebook.com/v23.0"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A database that does not answer: getting that far means the secrets were accepted.
			c.vars["DATABASE_URL"] = "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"
			c.vars["GATEWAY_ADDR"] = "127.0.0.1:0"
			c.vars["LOG_LEVEL"] = "error"
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := run(ctx, []string{"serve"}, func(k string) string { return c.vars[k] }, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil {
				t.Fatal("serve returned without an error")
			}
			msg := err.Error()
			if len(c.refuse) == 0 {
				if strings.Contains(msg, "development") {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			for _, v := range []string{"GATEWAY_SECRET_KEY", "PLATFORM_APP_SECRET", "PLATFORM_VERIFY_TOKEN"} {
				want := false
				for _, r := range c.refuse {
					want = want || r == v
				}
				if strings.Contains(msg, v) != want {
					t.Errorf("%s named=%t, want %t: %v", v, !want, want, err)
				}
			}
			if !strings.Contains(msg, "GATEWAY_ENV=development") || (c.refuse[0] == "GATEWAY_SECRET_KEY" && !strings.Contains(msg, "openssl rand -hex 32")) {
				t.Errorf("refusal does not say how to fix it: %v", err)
			}
		})
	}
}

// `gateway admin secrets rotate` re-seals every secret with GATEWAY_SECRET_KEY, reading with
// GATEWAY_SECRET_KEY_PREVIOUS; afterwards the new key alone reads them.
func TestAdminSecretsRotate(t *testing.T) {
	const oldKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	const newKey = "f0e0d0c0b0a090807060504030201000f0e0d0c0b0a090807060504030201000"
	vars := map[string]string{"DATABASE_URL": storetest.DSN(t), "LOG_LEVEL": "error", "GATEWAY_SECRET_KEY": oldKey, "GATEWAY_ENV": "development",
		"GATEWAY_ADMIN_ACCESS_TOKEN": "tok-1"}
	getenv := func(k string) string { return vars[k] }
	adminRun := func(args ...string) (map[string]any, error) {
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
	acct, err := adminRun("account", "create", "--name", "Rot Ltd", "--email", "rot@example.com")
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(int64(acct["id"].(float64)))
	if _, err := adminRun("number", "connect", "--account", id, "--waba-id", "W", "--phone-number-id", "P1",
		"--phone-number", "15550001234", "--display-name", "Rot"); err != nil {
		t.Fatal(err)
	}
	if _, err := adminRun("webhook", "create", "--account", id, "--url", "https://example.com/h"); err != nil {
		t.Fatal(err)
	}
	vars["GATEWAY_SECRET_KEY"], vars["GATEWAY_SECRET_KEY_PREVIOUS"] = newKey, oldKey
	res, err := adminRun("secrets", "rotate")
	if err != nil {
		t.Fatal(err)
	}
	if res["connections"] != float64(1) || res["webhook_endpoints"] != float64(1) {
		t.Fatalf("rotate: %v", res)
	}
	delete(vars, "GATEWAY_SECRET_KEY_PREVIOUS")
	a, err := openApp(context.Background(), mustConfig(t, getenv), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if c, err := a.store.ConnectionByAccount(context.Background(), int64(acct["id"].(float64))); err != nil || c.AccessToken != "tok-1" {
		t.Fatalf("after rotation with the new key alone: %v %q", err, c.AccessToken)
	}
}

// `gateway admin deadletters list` shows the platform webhook items that could not be applied,
// newest first, with their error.
func TestAdminDeadLettersList(t *testing.T) {
	dsn := storetest.DSN(t)
	vars := map[string]string{"DATABASE_URL": dsn, "LOG_LEVEL": "error", "GATEWAY_ENV": "development"}
	getenv := func(k string) string { return vars[k] }
	a, err := openApp(context.Background(), mustConfig(t, getenv), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.DB().Exec(`INSERT INTO platform_dead_letters (kind, item, error) VALUES
		('status', '{"id":"wamid.1"}', 'timestamp out of range'), ('message', '\xff00', 'invalid byte sequence')`); err != nil {
		t.Fatal(err)
	}
	a.close()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"admin", "deadletters", "list"}, getenv, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var res struct {
		DeadLetters []struct {
			Kind      string `json:"kind"`
			Error     string `json:"error"`
			Item      string `json:"item"`
			ItemBytes []byte `json:"item_bytes"`
		} `json:"dead_letters"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	d := res.DeadLetters
	if len(d) != 2 || d[0].Kind != "message" || len(d[0].ItemBytes) != 2 || d[1].Item != `{"id":"wamid.1"}` || d[1].Error != "timestamp out of range" {
		t.Fatalf("listed %+v", d)
	}
}

// The built binary: `gateway serve` on development secrets without GATEWAY_ENV=development
// exits non-zero, naming the variables, before it listens or touches the database.
func TestServeBinaryRefusesDevelopmentSecrets(t *testing.T) {
	cmd := exec.Command(gatewayBinary(t), "serve")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GATEWAY_ENV", "GATEWAY_SECRET_KEY", "PLATFORM_APP_SECRET", "PLATFORM_VERIFY_TOKEN":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "GATEWAY_ADDR=127.0.0.1:0", "DATABASE_URL=postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("serve exited with %v:\n%s", err, out)
	}
	for _, v := range []string{"GATEWAY_SECRET_KEY", "PLATFORM_APP_SECRET", "PLATFORM_VERIFY_TOKEN", "openssl rand -hex 32"} {
		if !strings.Contains(string(out), v) {
			t.Errorf("output does not mention %s:\n%s", v, out)
		}
	}
}

// `gateway admin` refuses the built-in development secrets outside GATEWAY_ENV=development,
// as serve does: `webhook create` would seal the new secret with the public development key,
// and `secrets rotate` with GATEWAY_SECRET_KEY forgotten would re-seal every secret under it.
// It refuses before touching the database; `admin help` needs no configuration.
func TestAdminRefusesDevelopmentSecrets(t *testing.T) {
	const realKey = "8f1b2c3d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff0"
	dsn := storetest.DSN(t)
	vars := map[string]string{"DATABASE_URL": dsn, "LOG_LEVEL": "error", "GATEWAY_ENV": "development"}
	getenv := func(k string) string { return vars[k] }
	var out bytes.Buffer
	if err := run(context.Background(), []string{"admin", "account", "create", "--name", "Dev Ltd", "--email", "dev@example.com"},
		getenv, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("in development: %v", err)
	}
	var acct struct{ ID int64 }
	if err := json.Unmarshal(out.Bytes(), &acct); err != nil || acct.ID == 0 {
		t.Fatalf("account create printed %q", out.String())
	}
	delete(vars, "GATEWAY_ENV")
	for _, args := range [][]string{
		{"webhook", "create", "--account", fmt.Sprint(acct.ID), "--url", "https://example.com/h"},
		{"secrets", "rotate"},
		{"account", "create", "--name", "X", "--email", "x@example.com"},
	} {
		out.Reset()
		err := run(context.Background(), append([]string{"admin"}, args...), getenv, &out, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "GATEWAY_SECRET_KEY") || !strings.Contains(err.Error(), "GATEWAY_ENV=development") {
			t.Errorf("admin %v on the development key: %v (printed %q)", args, err, out.String())
		}
	}
	// The previous key given but the new one forgotten: still the development key, refused.
	vars["GATEWAY_SECRET_KEY_PREVIOUS"] = realKey
	if err := run(context.Background(), []string{"admin", "secrets", "rotate"}, getenv, &out, &bytes.Buffer{}); err == nil {
		t.Error("secrets rotate with GATEWAY_SECRET_KEY unset was run")
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var endpoints, accounts int
	db.Get(&endpoints, `SELECT count(*) FROM webhook_endpoints`)
	db.Get(&accounts, `SELECT count(*) FROM accounts`)
	if endpoints != 0 || accounts != 1 {
		t.Fatalf("refused commands wrote: %d endpoints, %d accounts", endpoints, accounts)
	}
	if err := run(context.Background(), []string{"admin", "help"}, getenv, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("admin help: %v", err)
	}
}

// Outside development, serve also refuses GATEWAY_WEBHOOK_ALLOW_PRIVATE=true (customer
// webhooks could reach the gateway's own network) and a plain-http PLATFORM_BASE_URL (the
// access tokens would cross the network in clear), naming each; development allows both.
func TestServeRefusesDevelopmentSettings(t *testing.T) {
	const realKey = "8f1b2c3d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff0"
	prod := func(extra map[string]string) map[string]string {
		m := map[string]string{"GATEWAY_SECRET_KEY": realKey, "PLATFORM_APP_SECRET": "s3cr3t-app", "PLATFORM_VERIFY_TOKEN": "v3rify",
			"PLATFORM_BASE_URL": "https://graph.facebook.com/v23.0"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name   string
		vars   map[string]string
		refuse string // the variable named; empty: not refused
	}{
		{"private webhooks allowed", prod(map[string]string{"GATEWAY_WEBHOOK_ALLOW_PRIVATE": "true"}), "GATEWAY_WEBHOOK_ALLOW_PRIVATE"},
		{"plain-http platform", prod(map[string]string{"PLATFORM_BASE_URL": "http://graph.facebook.com/v23.0"}), "PLATFORM_BASE_URL"},
		{"platform URL unset (the simulator's)", prod(map[string]string{"PLATFORM_BASE_URL": ""}), "PLATFORM_BASE_URL"},
		{"upper-case scheme", prod(map[string]string{"PLATFORM_BASE_URL": "HTTP://graph.facebook.com/v23.0"}), "PLATFORM_BASE_URL"},
		{"both in development", prod(map[string]string{"GATEWAY_ENV": "development", "GATEWAY_WEBHOOK_ALLOW_PRIVATE": "true",
			"PLATFORM_BASE_URL": "http://127.0.0.1:8081/v23.0"}), ""},
		{"production values", prod(nil), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.vars["DATABASE_URL"] = "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"
			c.vars["GATEWAY_ADDR"] = "127.0.0.1:0"
			c.vars["LOG_LEVEL"] = "error"
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := run(ctx, []string{"serve"}, func(k string) string { return c.vars[k] }, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil {
				t.Fatal("serve returned without an error")
			}
			refused := strings.Contains(err.Error(), "refusing")
			if c.refuse == "" {
				if refused {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !refused || !strings.Contains(err.Error(), c.refuse) {
				t.Fatalf("want a refusal naming %s: %v", c.refuse, err)
			}
		})
	}
}
