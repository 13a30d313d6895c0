package main

import (
	"context"
	"testing"

	"gateway/platform/simulator"
	"gateway/store"
	"gateway/store/storetest"
)

func TestRestoreSimulatorNumbers(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	acct, err := st.CreateAccount(ctx, "Acme", "acme@example.com", "acme-restore")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ConnectNumber(ctx, store.Connection{AccountID: acct.ID, WabaID: "200000000000001", PhoneNumberID: "100000000000001",
		PhoneNumber: "15550001234", DisplayName: "Acme", AccessToken: "EAA-earlier-run"}); err != nil {
		t.Fatal(err)
	}
	sim := simulator.New(simulator.Config{})
	defer sim.Close()
	seedSimulator(sim)
	for range 2 { // idempotent
		if err := restoreSimulatorNumbers(ctx, st, sim); err != nil {
			t.Fatal(err)
		}
	}
	nums := sim.Numbers()
	if len(nums) != 2 {
		t.Fatalf("numbers %+v", nums)
	}
	var got simulator.Number
	for _, n := range nums {
		if n.PhoneNumberID == "100000000000001" {
			got = n
		}
	}
	if got.AccessToken != "EAA-earlier-run" || got.WabaID != "200000000000001" || got.Unregistered {
		t.Fatalf("restored %+v", got)
	}
	if len(sim.Templates("200000000000001")) == 0 {
		t.Fatal("restored WABA has no templates")
	}
}
