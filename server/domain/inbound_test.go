package domain

import (
	"encoding/json"
	"slices"
	"testing"
)

// The union of message kinds is closed: a known kind with its content keeps its name, a kind
// the gateway does not know (or a known one without its content) becomes unsupported naming
// the platform's type, and the platform's own unsupported keeps its errors.
func TestKindClosesTheUnion(t *testing.T) {
	body := "hi"
	cases := []struct {
		typ      string
		c        InboundContent
		want     string
		platform string
	}{
		{"text", InboundContent{Text: &body}, KindText, ""},
		{"request_welcome", InboundContent{}, KindRequestWelcome, ""},
		{"hologram", InboundContent{}, KindUnsupported, "hologram"},
		{"image", InboundContent{}, KindUnsupported, "image"},
		{"unsupported", InboundContent{Unsupported: &Unsupported{Errors: []UnsupportedError{{Code: 131051}}}}, KindUnsupported, ""},
		{"unknown", InboundContent{}, KindUnsupported, ""},
	}
	for _, c := range cases {
		got := c.c.Kind(c.typ)
		if got != c.want {
			t.Errorf("%s: kind %s, want %s", c.typ, got, c.want)
		}
		if got == KindUnsupported && c.c.Unsupported.PlatformType != c.platform {
			t.Errorf("%s: platform_type %q, want %q", c.typ, c.c.Unsupported.PlatformType, c.platform)
		}
		if !slices.Contains(MessageKinds, got) {
			t.Errorf("%s: %s is not one of MessageKinds", c.typ, got)
		}
	}
}

// The words that opt out and in: the whole trimmed text, any case; anything else is neither.
func TestOptOut(t *testing.T) {
	for text, want := range map[string]string{"STOP": "true", " unsubscribe ": "true", "Start": "false", "stop please": "nil", "": "nil"} {
		got := "nil"
		if v := OptOut(text); v != nil {
			got = map[bool]string{true: "true", false: "false"}[*v]
		}
		if got != want {
			t.Errorf("OptOut(%q) = %s, want %s", text, got, want)
		}
	}
}

// A reaction's event data names the message reacted to by the platform's id (v1's
// message_id), by ours when it is the account's, and says whether it was taken away.
func TestReactionFields(t *testing.T) {
	b, err := eventFields(KindReaction, InboundContent{Reaction: &Reaction{PlatformMessageID: "wamid.X", Emoji: ""}}, nil, 42)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"reaction":{"emoji":"","message_id":"wamid.X","reacted_to":{"message_id":42,"platform_message_id":"wamid.X"},"removed":true}}`
	if g, _ := json.Marshal(got); string(g) != want {
		t.Fatalf("got %s\nwant %s", g, want)
	}
}
