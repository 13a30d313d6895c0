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

// `gateway admin number connect` stores the number as digits only, normalised as POST
// /contacts does; a number that is not one is refused.
func TestAdminNumberConnectNormalises(t *testing.T) {
	vars := map[string]string{"DATABASE_URL": storetest.DSN(t), "LOG_LEVEL": "error", "GATEWAY_ENV": "development", "GATEWAY_ADMIN_ACCESS_TOKEN": "tok"}
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
	acct, err := adminRun("account", "create", "--name", "Num Ltd", "--email", "num@example.com")
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(int64(acct["id"].(float64)))
	connect := func(number string) (map[string]any, error) {
		return adminRun("number", "connect", "--account", id, "--waba-id", "W", "--phone-number-id", "P1",
			"--phone-number", number, "--display-name", "Num")
	}
	for _, in := range []string{"+4915790356237", "+49 157 9035-6237", "0049 (157) 90356237"} {
		c, err := connect(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if c["phone_number"] != "4915790356237" {
			t.Fatalf("%q stored as %v", in, c["phone_number"])
		}
	}
	if _, err := connect("call me"); err == nil || !strings.Contains(err.Error(), "--phone-number") {
		t.Fatalf("a non-number: %v", err)
	}
}
