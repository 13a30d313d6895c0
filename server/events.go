package server

import (
	"encoding/json"
	"time"

	"gateway/store"
)

// eventBody is the wire shape of a webhook delivery (spec, Events): the event id, its name, when
// it happened, its data, and mode "test" for test-mode events. Field order is fixed and the
// stored data is re-emitted as is, so the same event always yields the same bytes.
type eventBody struct {
	ID        string          `json:"id"`
	Event     string          `json:"event"`
	CreatedAt string          `json:"created_at"`
	Mode      string          `json:"mode,omitempty"`
	Data      json.RawMessage `json:"data"`
}

// EventBody renders the raw JSON body delivered for an event.
func EventBody(e store.Event) []byte {
	b := eventBody{ID: e.ID, Event: e.Type, CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339Nano), Data: e.Data}
	if e.Test {
		b.Mode = "test"
	}
	out, err := json.Marshal(b)
	if err != nil {
		// Data comes from a jsonb column, so it is always valid JSON.
		panic("event body: " + err.Error())
	}
	return out
}
