package whatsapp

import (
	"bytes"
	"encoding/json"
	"io"
)

// scanWebhook is ParseWebhook's single pass over the envelope (object, entry[], id, time,
// changes[], field, value). parseWebhookLevels decodes each level again from its raw bytes, so
// a status report's body was scanned about eight times, half the gateway's CPU for a report.
// scanWebhook reads the envelope once as tokens and decodes each change value once.
//
// It answers only when the body is exactly what parseWebhookLevels would accept, with the same
// result: a JSON object and nothing after it, keys matched case-sensitively and the last of a
// repeated key winning (as a map does), "object" a string or null, "entry" an array of
// objects, each "changes" absent, null or an array of objects. On anything else (a syntax
// error anywhere, a shape error, an unexpected type) ok is false and the caller parses level
// by level, which gives the precise error or the lenient result. FuzzScanWebhookSameAsLevels
// holds the two to the same answers.
func scanWebhook(body []byte) (p *WebhookPayload, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	p = &WebhookPayload{}
	var (
		sawEntry bool
		entries  []Entry
	)
	ok = scanObject(dec, func(key string) bool {
		switch key {
		case "object":
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return false
			}
			p.Object = ""
			if !isNull(raw) && json.Unmarshal(raw, &p.Object) != nil {
				return false
			}
		case "entry":
			sawEntry = true
			entries = []Entry{}
			return scanArray(dec, func() bool {
				e, ok := scanEntry(dec)
				entries = append(entries, e)
				return ok
			})
		default:
			return skipValue(dec)
		}
		return true
	})
	if !ok || !sawEntry || entries == nil {
		return nil, false
	}
	// Nothing but white space may follow the object.
	rest, _ := io.ReadAll(dec.Buffered())
	if len(bytes.TrimSpace(rest)) > 0 || int(dec.InputOffset())+len(rest) != len(body) {
		return nil, false
	}
	p.Entry = entries
	return p, true
}

// scanEntry reads one entry object.
func scanEntry(dec *json.Decoder) (Entry, bool) {
	var (
		e       Entry
		changes []Change
	)
	ok := scanObject(dec, func(key string) bool {
		switch key {
		case "id", "time":
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return false
			}
			if key == "id" {
				var id flexString
				_ = id.UnmarshalJSON(raw)
				e.ID = string(id)
			} else {
				var tm flexInt
				_ = tm.UnmarshalJSON(raw)
				e.Time = int64(tm)
			}
		case "changes":
			t, err := dec.Token()
			if err != nil {
				return false
			}
			changes = nil
			if t == nil { // null
				return true
			}
			changes = []Change{}
			return t == json.Delim('[') && scanElements(dec, func() bool {
				c, ok := scanChange(dec)
				changes = append(changes, c)
				return ok
			})
		default:
			return skipValue(dec)
		}
		return true
	})
	e.Changes = changes
	return e, ok
}

// scanChange reads one change object: its field, and its value decoded leniently.
func scanChange(dec *json.Decoder) (Change, bool) {
	var (
		c        Change
		rawValue json.RawMessage
	)
	ok := scanObject(dec, func(key string) bool {
		switch key {
		case "field":
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return false
			}
			var field flexString
			_ = field.UnmarshalJSON(raw)
			c.Field = string(field)
		case "value":
			return dec.Decode(&rawValue) == nil
		default:
			return skipValue(dec)
		}
		return true
	})
	if ok && rawValue != nil {
		_ = c.Value.UnmarshalJSON(rawValue)
	}
	return c, ok
}

// scanObject reads an object, calling member for each key with the decoder at its value;
// member reads the value. It fails when the next value is not an object.
func scanObject(dec *json.Decoder, member func(key string) bool) bool {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		key, ok := t.(string)
		if !ok || !member(key) {
			return false
		}
	}
	t, err := dec.Token()
	return err == nil && t == json.Delim('}')
}

// scanArray reads an array whose elements each must be an object, calling elem for each with
// the decoder at the element. It fails when the next value is not an array or an element is
// not an object.
func scanArray(dec *json.Decoder, elem func() bool) bool {
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return false
	}
	return scanElements(dec, elem)
}

// scanElements is scanArray after its '['.
func scanElements(dec *json.Decoder, elem func() bool) bool {
	for dec.More() {
		if !elem() {
			return false
		}
	}
	t, err := dec.Token()
	return err == nil && t == json.Delim(']')
}

// skipValue reads and drops the next value.
func skipValue(dec *json.Decoder) bool {
	var raw json.RawMessage
	return dec.Decode(&raw) == nil
}
