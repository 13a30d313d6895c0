package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gateway/store/storetest"
)

// `gateway admin key create` and `webhook create` refuse to take an account past
// GATEWAY_MAX_API_KEYS and GATEWAY_MAX_WEBHOOK_ENDPOINTS, saying which setting and what to
// do; a malformed setting is refused at start.
func TestAdminQuotas(t *testing.T) {
	vars := map[string]string{"DATABASE_URL": storetest.DSN(t), "LOG_LEVEL": "error", "GATEWAY_ENV": "development",
		"GATEWAY_MAX_API_KEYS": "2", "GATEWAY_MAX_WEBHOOK_ENDPOINTS": "1", "GATEWAY_WEBHOOK_ALLOW_PRIVATE": "true"}
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
	var keyErr error
	for range 3 {
		if _, keyErr = adminRun("key", "create", "--account", id, "--mode", "test"); keyErr != nil {
			break
		}
	}
	if keyErr == nil || !strings.Contains(keyErr.Error(), "already has 2 active keys") || !strings.Contains(keyErr.Error(), "GATEWAY_MAX_API_KEYS") {
		t.Fatalf("keys past the limit: %v", keyErr)
	}
	if _, err := adminRun("webhook", "create", "--account", id, "--url", "http://127.0.0.1:9/a"); err != nil {
		t.Fatal(err)
	}
	_, err = adminRun("webhook", "create", "--account", id, "--url", "http://127.0.0.1:9/b")
	if err == nil || !strings.Contains(err.Error(), "already has 1 webhook endpoints") || !strings.Contains(err.Error(), "GATEWAY_MAX_WEBHOOK_ENDPOINTS") {
		t.Fatalf("second endpoint: %v", err)
	}
	for _, bad := range []string{"0", "-1", "ten"} {
		if _, err := loadLimits(func(k string) string { return map[string]string{"GATEWAY_MAX_API_KEYS": bad}[k] }); err == nil {
			t.Errorf("GATEWAY_MAX_API_KEYS=%s accepted", bad)
		}
	}
}
