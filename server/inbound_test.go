package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gateway/server/servertest"
	"gateway/store"
)

// What customers send, end to end: each of the platform's documented payloads (the platform
// package's testdata, Meta's shapes), signed as the platform signs it, goes through
// /platform/webhook and produces its documented event with every field, valid against the
// event schemas (pwEvents validates every event of the account).

// The fixtures' ids.
const (
	fxSender     = "16505551234"
	fxUserID     = "US.13491208655302741918"
	fxNewNumber  = "16505559999"
	fxNewUserID  = "US.20587361049913285544"
	fxOurMessage = "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJDNUE3MkY4QTg2RDk5Q0Y3QTMA" // quoted and reacted to
	fxTextID     = "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA="
	fxBRUserID   = "BR.13491208655302741918"
	fxBRParentID = "BR.ENT.11815799212886844830"
)

// inFixture reads a platform fixture, addressed to the tenant's number.
func inFixture(t *testing.T, tn *pwTenant, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "platform", "whatsapp", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(b, []byte("106540352242922"), []byte(tn.Conn.PhoneNumberID))
}

// inMessageIDs are our ids of the inbound message with that platform id.
func inMessageIDs(t *testing.T, env *servertest.Env, accountID int64, wamid string) map[string]any {
	t.Helper()
	var ids struct {
		Message      int64 `db:"id"`
		Conversation int64 `db:"conversation_id"`
		Contact      int64 `db:"contact_id"`
	}
	if err := env.Store.DB().Get(&ids, `SELECT id, conversation_id, contact_id FROM messages WHERE account_id = $1 AND platform_message_id = $2`,
		accountID, wamid); err != nil {
		t.Fatalf("message %s: %v", wamid, err)
	}
	return map[string]any{"message_id": ids.Message, "conversation_id": ids.Conversation, "contact_id": ids.Contact}
}

func inJSON(t *testing.T, v any) string {
	t.Helper()
	var m any
	if err := json.Unmarshal(pwJSON(t, v), &m); err != nil {
		t.Fatal(err)
	}
	return string(pwJSON(t, m))
}

func TestInboundEveryKindProducesItsEvent(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	sheena := map[string]any{"from": fxSender, "name": "Sheena Nelson"}
	with := func(base map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	type kv = map[string]any
	cases := []struct {
		fixture string
		before  []string // fixtures posted first
		ours    bool     // the account sent fxOurMessage
		event   string
		wamid   string // the message the event names ("" for contact.updated)
		data    map[string]any
	}{
		{fixture: "message_text.json", event: "message.received", wamid: fxTextID,
			data: with(sheena, "type", "text", "text", "Is it in blue?")},
		{fixture: "message_text_reply.json", ours: true, event: "message.received",
			wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0RDE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: with(sheena, "type", "text", "text", "Yes, that one",
				"reply_to", kv{"message_id": "OURS", "platform_message_id": fxOurMessage})},
		{fixture: "message_image.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQUZFMDM3QTJBNjZDNzVFMEU0NwA=",
			data: with(sheena, "type", "image",
				"media", kv{"id": "1003383421387256", "mime_type": "image/jpeg", "caption": "This is a caption"},
				"image", kv{"id": "1003383421387256", "mime_type": "image/jpeg", "caption": "This is a caption",
					"sha256": "UTUDR6/bL6JzH2qa6H9vd+ai3pi7dKYEUl0HL8pUHEo="})},
		{fixture: "message_video.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQkQ0MEE1RjVCRkRGRDQ5RjRGRAA=",
			data: with(sheena, "type", "video",
				"media", kv{"id": "2098443007264512", "mime_type": "video/mp4", "caption": "Unboxing"},
				"video", kv{"id": "2098443007264512", "mime_type": "video/mp4", "caption": "Unboxing",
					"sha256": "a5f0e5c3c7a77d2bd2a9d2c4e8b1f3e2c1d0b9a8f7e6d5c4b3a2918273645566"})},
		{fixture: "message_audio.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTc2NUYxRjFBQkRGMUU3QjBEMAA=",
			data: with(sheena, "type", "audio",
				"media", kv{"id": "1208394737403842", "mime_type": "audio/ogg; codecs=opus"},
				"audio", kv{"id": "1208394737403842", "mime_type": "audio/ogg; codecs=opus", "voice": true,
					"sha256": "i1dBkTRw3RL0yrO1bv9ZKvBtMxb8pcUr1I4xyCnVV6s="})},
		{fixture: "message_document.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQjc1RjhBRkQyRkJGNTNCMDQ1QwA=",
			data: with(sheena, "type", "document",
				"media", kv{"id": "1584271612293474", "mime_type": "application/pdf", "caption": "Invoice", "filename": "invoice-0042.pdf"},
				"document", kv{"id": "1584271612293474", "mime_type": "application/pdf", "caption": "Invoice",
					"filename": "invoice-0042.pdf", "sha256": "B1r0Ccd8pUQyq8FA1Vq6uHW3qaw+vXcGhFvfbFBDpgc="})},
		{fixture: "message_sticker.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQzdBMzE3NkI2ODBFNTJGMTM2OAA=",
			data: with(sheena, "type", "sticker",
				"media", kv{"id": "1180417293418722", "mime_type": "image/webp"},
				"sticker", kv{"id": "1180417293418722", "mime_type": "image/webp",
					"sha256": "4vB8sYm0oGq8l5sBnsW9GbPF6Gm8fHGf9y1fKq1cFx0="})},
		{fixture: "message_sticker_animated.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ1MDE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: with(sheena, "type", "sticker",
				"media", kv{"id": "1180417293418799", "mime_type": "image/webp"},
				"sticker", kv{"id": "1180417293418799", "mime_type": "image/webp", "animated": true,
					"sha256": "kqTLb5cB0fX8yVQ9Qm1b9Fz7hGkq4c0sO6n5Vsf3q6G="})},
		{fixture: "message_location.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQ0E0MUQ1NTg4MTA1NjE0NzBGMwA=",
			data: with(sheena, "type", "location", "location", kv{"latitude": 37.483307, "longitude": -122.148981,
				"name": "Meta Headquarters", "address": "1 Hacker Way, Menlo Park, CA 94025", "url": "https://www.facebook.com"})},
		{fixture: "message_contacts.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQzI0NEY4NDFBNDE0NDlCQzZFNwA=",
			data: with(sheena, "type", "contacts", "contacts", []any{kv{
				"name":      kv{"formatted_name": "Barbara J. Johnson", "first_name": "Barbara", "last_name": "Johnson"},
				"phones":    []any{kv{"phone": "+1 (650) 555-1234", "wa_id": "16505551234", "type": "MOBILE"}, kv{"phone": "+1 (650) 555-0000", "type": "HOME"}},
				"emails":    []any{kv{"email": "bjohnson@example.com", "type": "WORK"}},
				"urls":      []any{kv{"url": "https://www.example.com", "type": "WORK"}},
				"addresses": []any{kv{"street": "1 Hacker Way", "city": "Menlo Park", "state": "CA", "zip": "94025", "country": "United States", "country_code": "us", "type": "WORK"}},
				"org":       kv{"company": "Example Inc.", "department": "Sales", "title": "Manager"},
				"birthday":  "1985-08-21"}})},
		{fixture: "message_interactive_button_reply.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQzVEOTY4Q0Y4QjVGNjI2OEI0NgA=",
			data: with(sheena, "type", "interactive", "text", "Yes, confirm", "reply", kv{"id": "confirm-yes", "title": "Yes, confirm"},
				"interactive", kv{"type": "button_reply", "button_reply": kv{"id": "confirm-yes", "title": "Yes, confirm"}},
				"reply_to", kv{"platform_message_id": "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJDNUE3MkY4QTg2RDk5Q0Y3QTMA"})},
		{fixture: "message_interactive_list_reply.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzRDVEOTY4Q0Y4QjVGNjI2OEI0NgA=",
			data: with(sheena, "type", "interactive", "text", "09:30", "reply", kv{"id": "slot-0930", "title": "09:30"},
				"interactive", kv{"type": "list_reply", "list_reply": kv{"id": "slot-0930", "title": "09:30", "description": "Tomorrow morning"}},
				"reply_to", kv{"platform_message_id": "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJEOUE3MkY4QTg2RDk5Q0Y3QTMA"})},
		{fixture: "message_interactive_nfm_reply.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0NDE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: with(sheena, "type", "interactive",
				"interactive", kv{"type": "nfm_reply", "nfm_reply": kv{"name": "flow", "body": "Sent", "flow_token": "appt-7f3c21",
					"response": kv{"flow_token": "appt-7f3c21", "slot": "2026-12-01T09:30", "party_size": 2, "notes": "Window seat ❤"}}},
				"reply_to", kv{"platform_message_id": "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJGNDg1QTE3MkQ5MjFCNUE3RTAA"})},
		{fixture: "message_button.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzRTdFQjM0NDRGQTgxRDY4M0YyNAA=",
			data: with(sheena, "type", "button", "text", "Stop promotions", "reply", kv{"title": "Stop promotions", "payload": "STOP_PROMO"},
				"button", kv{"payload": "STOP_PROMO", "text": "Stop promotions"},
				"reply_to", kv{"platform_message_id": "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjQyQkU1RTlGRjM4QTcyQjU2MgA="})},
		{fixture: "message_reaction.json", ours: true, event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzRjkzNzNBMjZCMkVENTQxNzZCNQA=",
			data: with(sheena, "type", "reaction", "reaction", kv{"message_id": fxOurMessage, "emoji": "👍", "removed": false,
				"reacted_to": kv{"message_id": "OURS", "platform_message_id": fxOurMessage}})},
		{fixture: "message_reaction_removed.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0RjE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: with(sheena, "type", "reaction", "reaction", kv{"message_id": fxOurMessage, "emoji": "", "removed": true,
				"reacted_to": kv{"platform_message_id": fxOurMessage}})},
		{fixture: "message_order.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0MDFGNjRDNjk1MDc0NTA5NDFFQwA=",
			data: with(sheena, "type", "order", "order", kv{"catalog_id": "1537321183616489", "text": "Please deliver after 6pm",
				"items": []any{kv{"product_retailer_id": "sku-blue-42", "quantity": 2, "item_price": 49.9, "currency": "USD"},
					kv{"product_retailer_id": "sku-red-40", "quantity": 1, "item_price": 45, "currency": "USD"}}})},
		{fixture: "message_referral.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0NTE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: with(sheena, "type", "text", "text", "Can I get more info about this?", "referral", kv{
				"source_url": "https://fb.me/3cr4Wqqkv", "source_id": "120210433592280123", "source_type": "ad",
				"headline": "Blue sneakers, 20% off", "body": "Tap to chat with us", "media_type": "video",
				"video_url": "https://video.xx.fbcdn.net/v/t42.1790-2/ad.mp4", "thumbnail_url": "https://scontent.xx.fbcdn.net/v/t15.5256-10/thumb.jpg",
				"ctwa_clid": "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv-_zfUQ2a"})},
		{fixture: "message_product_inquiry.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0RTE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: with(sheena, "type", "text", "text", "Do you have it in size 43?",
				"referred_product", kv{"catalog_id": "1537321183616489", "product_retailer_id": "sku-blue-42"},
				"reply_to", kv{"platform_message_id": "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJFNUE3MkY4QTg2RDk5Q0Y3QTMA"})},
		{fixture: "message_forwarded.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0QzE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: with(sheena, "type", "image", "forwarded", true, "frequently_forwarded", true,
				"media", kv{"id": "1457190078592240", "mime_type": "image/jpeg"},
				"image", kv{"id": "1457190078592240", "mime_type": "image/jpeg", "sha256": "f3q6GkqTLb5cB0fX8yVQ9Qm1b9Fz7hGkq4c0sO6n5Vs="})},
		{fixture: "message_unsupported.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0MkY0NzU3RTI4RTA5QjI0QzdBRQA=",
			data: with(sheena, "type", "unsupported", "unsupported", kv{"errors": []any{kv{"code": 131051, "title": "Message type unknown",
				"message": "Message type unknown", "details": "Message type is currently not supported."}}})},
		{fixture: "message_future_type.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0M0Y0NzU3RTI4RTA5QjI0QzdBRQA=",
			data: with(sheena, "type", "unsupported", "unsupported", kv{"platform_type": "hologram"})},
		{fixture: "message_request_welcome.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ1MTE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: with(sheena, "type", "request_welcome", "user_id", fxUserID)},
		{fixture: "message_text_with_user_id.json", event: "message.received", wamid: "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0NzE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: with(sheena, "type", "text", "text", "It's me again", "user_id", fxUserID, "username", "sheena.n")},
		{fixture: "bsuid_username_only.json", event: "message.received_without_number",
			wamid: "wamid.HBgVQlIuMTM0OTEyMDg2NTUzMDI3NDE5MTgVAgASGBQ0NjE3RjFDQjM0NDU3QkM4QkE5MwA=",
			data: kv{"name": "Ana Lima", "type": "text", "text": "Olá! Is the blue one in stock?", "user_id": fxBRUserID,
				"parent_user_id": fxBRParentID, "username": "ana.makes"}},
		{fixture: "message_edit.json", before: []string{"message_text.json"}, event: "message.edited", wamid: fxTextID,
			data: kv{"chat_message_id": fxTextID, "type": "text", "text": "Is it in navy blue?", "edited_at": "2025-06-08T21:03:20Z"}},
		{fixture: "message_revoke.json", before: []string{"message_text.json"}, event: "message.deleted", wamid: fxTextID,
			data: kv{"chat_message_id": fxTextID, "deleted_at": "2025-06-08T21:03:30Z"}},
		{fixture: "message_system_user_changed_number.json", before: []string{"message_text_with_user_id.json"}, event: "contact.updated",
			data: kv{"reason": "number_changed", "mobile": fxNewNumber, "user_id": fxNewUserID, "username": "sheena.n",
				"previous": kv{"mobile": fxSender, "user_id": fxUserID}}},
		{fixture: "message_system.json", before: []string{"message_text.json"}, event: "contact.updated",
			data: kv{"reason": "number_changed", "mobile": fxNewNumber, "previous": kv{"mobile": fxSender}}},
		{fixture: "bsuid_system_user_changed_user_id.json", before: []string{"bsuid_username_only.json"}, event: "contact.updated",
			data: kv{"reason": "user_id_changed", "user_id": "BR.99310472285563100471", "parent_user_id": fxBRParentID,
				"username": "ana.makes", "previous": kv{"user_id": fxBRUserID, "parent_user_id": fxBRParentID}}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.fixture] = true
		t.Run(c.fixture, func(t *testing.T) {
			tn := pwNewTenant(t, env, c.fixture)
			var ours int64
			if c.ours {
				ours = pwSeedMessage(t, env, tn, fxOurMessage, "delivered")
			}
			for _, b := range c.before {
				pwPostOK(t, env, inFixture(t, tn, b))
			}
			seen := len(pwEvents(t, env, tn.Account.ID, ""))
			pwPostOK(t, env, inFixture(t, tn, c.fixture))
			after := pwEvents(t, env, tn.Account.ID, "")[seen:]
			var got *store.Event
			var types []string
			for i, e := range after {
				types = append(types, e.Type)
				if e.Type == c.event && got == nil {
					got = &after[i]
				}
			}
			if got == nil {
				t.Fatalf("no %s; events %v", c.event, types)
			}
			want := map[string]any{}
			for k, v := range c.data {
				want[k] = v
			}
			if c.wamid != "" {
				for k, v := range inMessageIDs(t, env, tn.Account.ID, c.wamid) {
					want[k] = v
				}
			} else {
				want["contact_id"] = pwData(t, *got)["contact_id"]
			}
			for _, k := range []string{"reply_to", "reaction"} {
				if m, ok := want[k].(kv); ok {
					m = with(m)
					if r, ok := m["reacted_to"].(kv); ok && r["message_id"] == "OURS" {
						m["reacted_to"] = with(r, "message_id", ours)
					}
					if m["message_id"] == "OURS" {
						m["message_id"] = ours
					}
					want[k] = m
				}
			}
			if g, w := inJSON(t, got.Data), inJSON(t, want); g != w {
				t.Errorf("%s data:\n got %s\nwant %s", c.event, g, w)
			}
			if n := pwCount(t, env, `SELECT count(*) FROM platform_dead_letters WHERE account_id = $1`, tn.Account.ID); n != 0 {
				t.Errorf("%d dead letters", n)
			}
		})
	}
	files, err := filepath.Glob(filepath.Join("..", "platform", "whatsapp", "testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if (strings.HasPrefix(name, "message_") || strings.HasPrefix(name, "bsuid_")) && !covered[name] {
			t.Errorf("fixture %s has no expected event here", name)
		}
	}
}

// inContactOf is the contact of the account's message with that platform id.
func inContactOf(t *testing.T, env *servertest.Env, accountID int64, wamid string) store.Contact {
	t.Helper()
	id := inMessageIDs(t, env, accountID, wamid)["contact_id"].(int64)
	c, err := env.Store.ContactByID(context.Background(), accountID, id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A person who changes number, or whose user id the platform renews, stays one contact: the
// contact moves or is relinked (contact.updated with the identifiers before and after), and
// their STOP, and their later messages, follow them.
func TestInboundIdentityChangesFollowThePerson(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	ctx := context.Background()

	t.Run("number", func(t *testing.T) {
		tn := pwNewTenant(t, env, "Number change")
		pwPostOK(t, env, inFixture(t, tn, "message_text_with_user_id.json"))
		c := inContactOf(t, env, tn.Account.ID, "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ0NzE3RjFDQjM0NDU3QkM4QkE5MwA=")
		pwPostOK(t, env, pwInbound(t, tn.Conn.PhoneNumberID, fxSender, "Sheena Nelson", "wamid.STOP1", "text", map[string]any{"body": " stop "}))
		pwPostOK(t, env, inFixture(t, tn, "message_system_user_changed_number.json"))
		got, err := env.Store.ContactByID(ctx, tn.Account.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Mobile != fxNewNumber || got.UserID != fxNewUserID || !got.Blocked {
			t.Fatalf("after the change: %+v (want %s, %s, blocked)", got, fxNewNumber, fxNewUserID)
		}
		pwPostOK(t, env, pwInbound(t, tn.Conn.PhoneNumberID, fxNewNumber, "Sheena Nelson", "wamid.NEW1", "text", map[string]any{"body": "new phone"}))
		if d := inContactOf(t, env, tn.Account.ID, "wamid.NEW1"); d.ID != c.ID {
			t.Fatalf("a message from the new number went to contact %d, not %d", d.ID, c.ID)
		}
		if n := len(pwEvents(t, env, tn.Account.ID, "contact.created")); n != 1 {
			t.Fatalf("%d contact.created (the person is one contact)", n)
		}
		upd := pwEvents(t, env, tn.Account.ID, "contact.updated")
		if len(upd) != 1 || pwData(t, upd[0])["reason"] != "number_changed" {
			t.Fatalf("contact.updated: %v", upd)
		}
		// The platform's retry of the same notice changes nothing and is not a dead letter.
		pwPostOK(t, env, inFixture(t, tn, "message_system_user_changed_number.json"))
		if n := len(pwEvents(t, env, tn.Account.ID, "contact.updated")); n != 1 {
			t.Fatalf("%d contact.updated after a redelivery", n)
		}
		if n := pwCount(t, env, `SELECT count(*) FROM platform_dead_letters WHERE account_id = $1`, tn.Account.ID); n != 0 {
			t.Fatalf("%d dead letters", n)
		}
	})

	t.Run("user id", func(t *testing.T) {
		tn := pwNewTenant(t, env, "User id change")
		only := string(inFixture(t, tn, "bsuid_username_only.json"))
		pwPostOK(t, env, []byte(only))
		c := inContactOf(t, env, tn.Account.ID, "wamid.HBgVQlIuMTM0OTEyMDg2NTUzMDI3NDE5MTgVAgASGBQ0NjE3RjFDQjM0NDU3QkM4QkE5MwA=")
		if c.Mobile != "" || c.UserID != fxBRUserID || c.Username != "ana.makes" {
			t.Fatalf("username-only contact: %+v", c)
		}
		stop := strings.NewReplacer("Ol\\u00e1! Is the blue one in stock?", "STOP", "Olá! Is the blue one in stock?", "STOP",
			"BQ0NjE3RjFDQjM0NDU3QkM4QkE5MwA=", "STOP1").Replace(only)
		pwPostOK(t, env, []byte(stop))
		pwPostOK(t, env, inFixture(t, tn, "bsuid_system_user_changed_user_id.json"))
		got, err := env.Store.ContactByID(ctx, tn.Account.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.UserID != "BR.99310472285563100471" || !got.Blocked {
			t.Fatalf("after the change: %+v", got)
		}
		later := strings.NewReplacer(fxBRUserID, "BR.99310472285563100471", "BQ0NjE3RjFDQjM0NDU3QkM4QkE5MwA=", "LATER").Replace(only)
		pwPostOK(t, env, []byte(later))
		if d := inContactOf(t, env, tn.Account.ID, "wamid.HBgVQlIuMTM0OTEyMDg2NTUzMDI3NDE5MTgVAgASGLATER"); d.ID != c.ID {
			t.Fatalf("a message under the new user id went to contact %d, not %d", d.ID, c.ID)
		}
		if n := len(pwEvents(t, env, tn.Account.ID, "contact.created_without_number")); n != 1 {
			t.Fatalf("%d contact.created_without_number", n)
		}
		if n := len(pwEvents(t, env, tn.Account.ID, "contact.created")); n != 0 {
			t.Fatalf("%d contact.created for a person without a number", n)
		}
	})
}

// An endpoint receives message.received_without_number only once it opted in; one that did
// not is never sent it, and the store counts what it missed. message.received goes to both.
func TestInboundOptInFiltering(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	ctx := context.Background()
	tn := pwNewTenant(t, env, "Opt in") // its endpoint receives the v1 types
	eps, err := env.Store.WebhookEndpointsByAccount(ctx, tn.Account.ID)
	if err != nil || len(eps) != 1 {
		t.Fatalf("%v %v", eps, err)
	}
	v1 := eps[0]
	optedIn, err := env.Store.CreateWebhookEndpoint(ctx, tn.Account.ID, "https://hooks.example.com/opted-in", "whsec_"+strings.Repeat("A", 32))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.SetWebhookEndpointEventTypes(ctx, tn.Account.ID, optedIn.ID,
		append(slices.Clone(store.V1EventTypes), store.EventMessageReceivedWithoutNumber)); err != nil {
		t.Fatal(err)
	}
	pwPostOK(t, env, inFixture(t, tn, "bsuid_username_only.json"))
	pwPostOK(t, env, inFixture(t, tn, "message_text.json"))
	deliveries := func(endpointID int64, event string) int {
		return pwCount(t, env, `SELECT count(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
			WHERE d.account_id = $1 AND d.endpoint_id = $2 AND e.type = $3`, tn.Account.ID, endpointID, event)
	}
	if n := deliveries(v1.ID, "message.received_without_number"); n != 0 {
		t.Errorf("the v1 endpoint got %d message.received_without_number", n)
	}
	if n := deliveries(optedIn.ID, "message.received_without_number"); n != 1 {
		t.Errorf("the opted-in endpoint got %d message.received_without_number", n)
	}
	for _, ep := range []int64{v1.ID, optedIn.ID} {
		if n := deliveries(ep, "message.received"); n != 1 {
			t.Errorf("endpoint %d got %d message.received", ep, n)
		}
		if n := deliveries(ep, "contact.created_without_number"); n != 0 {
			t.Errorf("endpoint %d got %d contact.created_without_number (neither chose it)", ep, n)
		}
	}
	missed, err := env.Store.MissedEvents(ctx, tn.Account.ID, v1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if missed["message.received_without_number"] != 1 || missed["contact.created_without_number"] != 1 {
		t.Errorf("missed by the v1 endpoint: %v", missed)
	}
}

// An edit of a message the account never received cannot be applied: the delivery is answered
// 200, and the edit is kept as a dead letter saying why.
func TestInboundNotApplicableIsDeadLettered(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	tn := pwNewTenant(t, env, "Dead letters")
	pwPostOK(t, env, inFixture(t, tn, "message_edit.json"))
	var dl struct {
		Kind  string `db:"kind"`
		Error string `db:"error"`
		Item  []byte `db:"item"`
	}
	if err := env.Store.DB().Get(&dl, `SELECT kind, error, item FROM platform_dead_letters WHERE account_id = $1`, tn.Account.ID); err != nil {
		t.Fatal(err)
	}
	if dl.Kind != "message" || !strings.Contains(dl.Error, "not a message the account received") ||
		!bytes.Contains(dl.Item, []byte("Is it in navy blue?")) {
		t.Fatalf("dead letter: %s %q %s", dl.Kind, dl.Error, dl.Item)
	}
	if n := len(pwEvents(t, env, tn.Account.ID, "")); n != 0 {
		t.Fatalf("%d events", n)
	}
}
