package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gateway/platform/simulator"
	"gateway/store/storetest"
)

// `gateway admin templates sync --account ID` pulls the account's templates from the platform
// and prints what it did as one JSON object.
func TestAdminTemplatesSync(t *testing.T) {
	sim := simulator.New(simulator.Config{})
	seedSimulator(sim)
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	vars := map[string]string{
		"DATABASE_URL":      storetest.DSN(t),
		"PLATFORM_BASE_URL": simURL + "/v23.0",
		"LOG_LEVEL":         "error",
		"GATEWAY_ENV":       "development",
		// number connect reads the token from the environment.
		"GATEWAY_ADMIN_ACCESS_TOKEN": devNumber.AccessToken,
	}
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
	acct, err := adminRun("account", "create", "--name", "Sync Ltd", "--email", "sync@example.com")
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(int64(acct["id"].(float64)))
	if _, err := adminRun("templates", "sync", "--account", id); err == nil || !strings.Contains(err.Error(), "no connected number") {
		t.Fatalf("sync without a number: %v", err)
	}
	if _, err := adminRun("number", "connect", "--account", id, "--waba-id", devNumber.WabaID, "--phone-number-id", devNumber.PhoneNumberID,
		"--phone-number", devNumber.DisplayPhoneNumber, "--display-name", "Sync"); err != nil {
		t.Fatal(err)
	}
	res, err := adminRun("templates", "sync", "--account", id)
	if err != nil {
		t.Fatal(err)
	}
	if res["account_id"] != acct["id"] || res["fetched"] != 16.0 || res["approved"] != 14.0 || res["created"] != 16.0 || res["removed"] != 0.0 {
		t.Fatalf("sync printed %v", res)
	}
	if _, err := adminRun("templates", "sync"); err == nil || !strings.Contains(err.Error(), "--account") {
		t.Fatalf("sync without --account: %v", err)
	}
}

func mustConfig(t testing.TB, getenv func(string) string) config {
	t.Helper()
	c, err := loadConfig(getenv)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
