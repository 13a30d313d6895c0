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

// `gateway admin number connect-token` validates the token against the platform before saving.
func TestAdminNumberConnectToken(t *testing.T) {
	sim := simulator.New(simulator.Config{})
	seedSimulator(sim)
	simURL, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	vars := map[string]string{"DATABASE_URL": storetest.DSN(t), "PLATFORM_BASE_URL": simURL + "/v23.0", "LOG_LEVEL": "error", "GATEWAY_ENV": "development"}
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
	acct, err := adminRun("account", "create", "--name", "Token Ltd", "--email", "token@example.com")
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(int64(acct["id"].(float64)))
	vars["GATEWAY_ADMIN_ACCESS_TOKEN"] = "not-the-token"
	_, err = adminRun("number", "connect-token", "--account", id, "--waba-id", devNumber.WabaID,
		"--phone-number-id", devNumber.PhoneNumberID)
	if err == nil || !strings.HasPrefix(err.Error(), "reading the number: ") {
		t.Fatalf("a wrong token: %v", err)
	}
	vars["GATEWAY_ADMIN_ACCESS_TOKEN"] = devNumber.AccessToken
	c, err := adminRun("number", "connect-token", "--account", id, "--waba-id", devNumber.WabaID,
		"--phone-number-id", devNumber.PhoneNumberID)
	if err != nil {
		t.Fatal(err)
	}
	if c["phone_number"] != "15550783881" || c["display_name"] != devNumber.VerifiedName || c["access_token"] != nil {
		t.Fatalf("connect-token printed %v", c)
	}
}
