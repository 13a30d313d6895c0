package dashboard

import (
	"testing"

	"gateway/store"
)

// Every event type an endpoint can choose is explained in words on the form.
func TestEveryEventTypeHasHelp(t *testing.T) {
	for _, c := range eventTypeChoices(nil) {
		if c.Help == "" {
			t.Errorf("event type %s has no help text", c.Type)
		}
	}
	if n := len(eventTypeChoices(nil)); n != len(store.EventTypes) {
		t.Fatalf("%d choices for %d event types", n, len(store.EventTypes))
	}
}
