package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"gateway/gen"
	"gateway/server/servertest"
)

// GET /events/examples returns one example of each event of WebhookEvent's oneOf, each valid
// against its own schema and readable through the generated union's discriminator; without a
// key it is a 401 like every operation.
func TestEventExamples(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	if got := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/events/examples"}); got.Status != http.StatusUnauthorized {
		t.Fatalf("no key: %d %s", got.Status, got.Body)
	}
	got := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/events/examples", Key: a.Test})
	if got.Status != http.StatusOK {
		t.Fatalf("%d %s", got.Status, got.Body)
	}
	var body gen.EventExamplesEnvelope
	got.JSON(t, &body)
	schemaOf := map[string]string{}
	for name, ref := range env.Spec.Components.Schemas["WebhookEvent"].Value.Discriminator.Mapping {
		schemaOf[name] = ref.Ref[len("#/components/schemas/"):]
	}
	if len(body.Data.Events) != len(schemaOf) {
		t.Fatalf("%d examples, the discriminator maps %d events", len(body.Data.Events), len(schemaOf))
	}
	seen := map[string]bool{}
	for _, ev := range body.Data.Events {
		name, err := ev.Discriminator()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ev.ValueByDiscriminator(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.ValidateSchema(schemaOf[name], raw); err != nil {
			t.Errorf("%s against %s: %v", name, schemaOf[name], err)
		}
		seen[name] = true
	}
	for name := range schemaOf {
		if !seen[name] {
			t.Errorf("no example of %s", name)
		}
	}
}
