package domain

import (
	"bytes"
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

// EventBody renders the raw JSON body delivered for an event. It writes the bytes by hand
// when nothing needs escaping (the usual case, and cheaper: one is rendered per attempt), and
// otherwise through encoding/json; both give the same bytes (TestEventBodyMatchesMarshal).
func EventBody(e store.Event) []byte {
	if !plainJSON(e.ID) || !plainJSON(e.Type) || htmlUnsafe(e.Data) {
		return marshalEventBody(e)
	}
	b := make([]byte, 0, len(`{"id":"","event":"","created_at":"","mode":"test","data":}`)+
		len(e.ID)+len(e.Type)+len(time.RFC3339Nano)+len(e.Data))
	b = append(append(append(b, `{"id":"`...), e.ID...), `","event":"`...)
	b = append(append(b, e.Type...), `","created_at":"`...)
	b = append(e.CreatedAt.UTC().AppendFormat(b, time.RFC3339Nano), '"')
	if e.Test {
		b = append(b, `,"mode":"test"`...)
	}
	buf := bytes.NewBuffer(append(b, `,"data":`...))
	if err := json.Compact(buf, e.Data); err != nil {
		return marshalEventBody(e) // it reports the error as it always did
	}
	return append(buf.Bytes(), '}')
}

// htmlUnsafe reports whether b holds what encoding/json escapes inside strings by default: <,
// > and &, or U+2028 or U+2029 (any E2 byte, the first of theirs, is taken as one: harmless).
func htmlUnsafe(b []byte) bool {
	for _, c := range b {
		switch c {
		case '<', '>', '&', 0xe2:
			return true
		}
	}
	return false
}

// plainJSON reports whether s is printable ASCII that JSON writes as is.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// marshalEventBody is EventBody through encoding/json.
func marshalEventBody(e store.Event) []byte {
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
