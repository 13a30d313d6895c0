package simulator_test

import (
	"fmt"
	"log"

	"gateway/platform/simulator"
)

// A test starts the fake Cloud API on loopback, registers a number and the
// default templates, scripts one recipient and points the client at it.
func Example() {
	sim := simulator.New(simulator.Config{
		AppSecret:  "app-secret",
		WebhookURL: "", // e.g. the gateway's /platform/webhook
	})
	defer sim.Close()
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	sim.AddNumber(simulator.Number{PhoneNumberID: "106540352242922", WabaID: "102290129340398",
		DisplayPhoneNumber: "15550783881", AccessToken: "token"})
	sim.SeedTemplates("102290129340398", simulator.DefaultTemplates())
	sim.Script("+5511987654321", simulator.Outcome{FailAsync: 131026})

	graphRoot := base + "/v23.0" // PLATFORM_BASE_URL for the client under test
	_ = graphRoot
	fmt.Println(len(sim.Templates("102290129340398")))
	// Output: 8
}
