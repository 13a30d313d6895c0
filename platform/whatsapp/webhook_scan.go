package whatsapp

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// scanWebhook is ParseWebhook's single pass over the envelope (object, entry[], id, time,
// changes[], field, value). parseWebhookLevels decodes each level again from its raw bytes, so
// a status report's body was scanned about eight times, half the gateway's CPU for a report.
// scanWebhook checks the body once (json.Valid), then walks the envelope's bytes, which it
// knows are valid JSON, and decodes each change value once, from its place in the body.
//
// It answers only when the body is exactly what parseWebhookLevels would accept, with the same
// result: a JSON object and nothing after it, keys matched case-sensitively and the last of a
// repeated key winning (as a map does), "object" a string or null, "entry" an array of
// objects, each "changes" absent, null or an array of objects. On anything else (a syntax
// error anywhere, a shape error, an unexpected type, an envelope key written with an escape)
// ok is false and the caller parses level by level, which gives the precise error or the
// lenient result. FuzzScanWebhookSameAsLevels holds the two to the same answers.
func scanWebhook(body []byte) (p *WebhookPayload, ok bool) {
	if !json.Valid(body) {
		return nil, false
	}
	w := &walker{b: body}
	p = &WebhookPayload{}
	var entries []Entry
	ok = w.object(func(key string) bool {
		switch key {
		case "object":
			p.Object = ""
			if w.null() {
				return true
			}
			s, ok := jsonString(w.value())
			p.Object = s
			return ok
		case "entry":
			entries = []Entry{}
			return w.array(func() bool {
				e, ok := scanEntry(w)
				entries = append(entries, e)
				return ok
			})
		default:
			w.value()
			return true
		}
	})
	if !ok || entries == nil {
		return nil, false
	}
	p.Entry = entries
	return p, true
}

// scanEntry reads one entry object.
func scanEntry(w *walker) (Entry, bool) {
	var (
		e       Entry
		changes []Change
	)
	ok := w.object(func(key string) bool {
		switch key {
		case "id":
			var id flexString
			_ = id.UnmarshalJSON(w.value())
			e.ID = string(id)
		case "time":
			var tm flexInt
			_ = tm.UnmarshalJSON(w.value())
			e.Time = int64(tm)
		case "changes":
			changes = nil
			if w.null() {
				return true
			}
			changes = []Change{}
			return w.array(func() bool {
				c, ok := scanChange(w)
				changes = append(changes, c)
				return ok
			})
		default:
			w.value()
		}
		return true
	})
	e.Changes = changes
	return e, ok
}

// scanChange reads one change object: its field, and its value decoded leniently.
func scanChange(w *walker) (Change, bool) {
	var (
		c        Change
		rawValue []byte
	)
	ok := w.object(func(key string) bool {
		switch key {
		case "field":
			var field flexString
			_ = field.UnmarshalJSON(w.value())
			c.Field = string(field)
		case "value":
			rawValue = w.value()
		default:
			w.value()
		}
		return true
	})
	if ok && rawValue != nil {
		_ = c.Value.UnmarshalJSON(rawValue)
	}
	return c, ok
}

// jsonString decodes a JSON string value as encoding/json does; ok is false when raw is not a
// string. A string with no escape and valid UTF-8 is its bytes between the quotes.
func jsonString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// walker reads values from JSON that json.Valid accepted, so it checks no syntax: it only
// finds where each value ends.
type walker struct {
	b []byte
	i int
}

// space moves past white space.
func (w *walker) space() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// value returns the next value's bytes and moves past it.
func (w *walker) value() []byte {
	w.space()
	start := w.i
	switch w.b[w.i] {
	case '"':
		w.skipString()
	case '{', '[':
		for depth := 0; ; {
			switch w.b[w.i] {
			case '"':
				w.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			w.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return w.b[start:w.i]
			}
			w.i++
		}
	}
	return w.b[start:w.i]
}

// skipString moves past the string at w.i.
func (w *walker) skipString() {
	for w.i++; ; w.i++ {
		switch w.b[w.i] {
		case '\\':
			w.i++
		case '"':
			w.i++
			return
		}
	}
}

// null moves past the next value when it is null, and says whether it was.
func (w *walker) null() bool {
	w.space()
	if w.b[w.i] == 'n' {
		w.i += len("null")
		return true
	}
	return false
}

// object reads an object, calling member for each key with the walker at its value; member
// reads the value. It fails when the next value is not an object, when a key has an escape
// (the envelope's keys never do; the levels parse decodes such a key), or when member fails.
func (w *walker) object(member func(key string) bool) bool {
	return w.elements('{', '}', func() bool {
		k := w.value()
		if bytes.IndexByte(k, '\\') >= 0 {
			return false
		}
		w.space()
		w.i++ // ':'
		return member(string(k[1 : len(k)-1]))
	})
}

// array reads an array whose elements each must be an object, calling elem for each with the
// walker at the element. It fails when the next value is not an array or an element is not an
// object.
func (w *walker) array(elem func() bool) bool { return w.elements('[', ']', elem) }

// elements reads the object or array that opens with open and closes with close, calling each
// for every element (an object's is its key, colon and value); it fails when the next value
// does not open with open or each fails.
func (w *walker) elements(open, close byte, each func() bool) bool {
	w.space()
	if w.b[w.i] != open {
		return false
	}
	w.i++
	w.space()
	if w.b[w.i] == close {
		w.i++
		return true
	}
	for {
		if !each() {
			return false
		}
		w.space()
		c := w.b[w.i]
		w.i++
		if c == close {
			return true
		}
	}
}
