package domain

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"gateway/store"
)

// TestEventBodyMatchesMarshal checks that EventBody's hand-written bytes are those of
// encoding/json (marshalEventBody), whichever way each event takes.
func TestEventBodyMatchesMarshal(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 2, 123400000, time.FixedZone("BRT", -3*3600))
	for _, data := range []string{
		`{"message_id": 1001, "status": "delivered", "timestamp": "2026-11-21T10:00:02Z"}`,
		`{"nested": {"list": [1, 2.5, -3e2, true, null], "empty": {}}, "s": "a b\tc"}`,
		`{"name": "Zoë \"quoted\" \\ back", "emoji": "😀", "escaped": "\u00e9"}`,
		`{"html": "<b>Tom & Jerry</b>"}`,
		`{"separators": "line\u2028para\u2029"}`,
		"{\"raw\": \"line\u2028para\u2029\"}", // the characters themselves, not escapes
		`{"amp": "Tom & Jerry"}`,
		`[]`,
		``, // no data: null
	} {
		for _, test := range []bool{false, true} {
			e := store.Event{ID: "0193a5b2-7c1d-7f00-8000-000000000001", Type: "message.status", Test: test, CreatedAt: at}
			if data != "" {
				e.Data = json.RawMessage(data)
			}
			if got, want := EventBody(e), marshalEventBody(e); !bytes.Equal(got, want) {
				t.Errorf("data %s, test %v:\n got %s\nwant %s", data, test, got, want)
			}
		}
	}
	for _, odd := range []store.Event{
		{ID: `id"with quote`, Type: "message.sent", CreatedAt: at, Data: json.RawMessage(`{}`)},
		{ID: "id", Type: "a<b>", CreatedAt: at, Data: json.RawMessage(`{}`)},
		{ID: "idé", Type: "message.sent", CreatedAt: at, Data: json.RawMessage(`{}`)},
	} {
		if got, want := EventBody(odd), marshalEventBody(odd); !bytes.Equal(got, want) {
			t.Errorf("event %+v:\n got %s\nwant %s", odd, got, want)
		}
	}
}
