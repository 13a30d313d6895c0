package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func TestRecordInboundEditAndDeletion(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "edits")
	res, err := st.RecordInbound(ctx, a.ID, inbound("wamid.E1", "4915112345678", "Ann", "helo"))
	if err != nil {
		t.Fatal(err)
	}
	edit := store.InboundEdit{OriginalPlatformID: "wamid.E1", At: t0.Add(time.Minute), Type: "text",
		Content: json.RawMessage(`{"body":"hello"}`), EventFields: json.RawMessage(`{"text":{"body":"hello"}}`)}
	got, err := st.RecordInboundEdit(ctx, a.ID, edit)
	if err != nil || got.Duplicate || got.MessageID != res.MessageID || got.ContactID != res.ContactID {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err = st.RecordInboundEdit(ctx, a.ID, edit); err != nil || !got.Duplicate || got.MessageID != res.MessageID {
		t.Fatalf("repeated edit %+v %v", got, err)
	}
	if _, err := st.RecordInboundEdit(ctx, a.ID, store.InboundEdit{OriginalPlatformID: "wamid.nope", At: t0, Type: "text"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown original: %v", err)
	}
	other := newAccount(t, st, "edits-other")
	if _, err := st.RecordInboundDeletion(ctx, other.ID, "wamid.E1", t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another account's message: %v", err)
	}
	if got, err = st.RecordInboundDeletion(ctx, a.ID, "wamid.E1", t0.Add(2*time.Minute)); err != nil || got.Duplicate {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err = st.RecordInboundDeletion(ctx, a.ID, "wamid.E1", t0.Add(3*time.Minute)); err != nil || !got.Duplicate {
		t.Fatalf("repeated deletion %+v %v", got, err)
	}
	ed := eventsOfType(t, st, a.ID, store.EventMessageEdited)
	if len(ed) != 1 || ed[0]["message_id"] != float64(res.MessageID) || ed[0]["chat_message_id"] != "wamid.E1" ||
		ed[0]["text"].(map[string]any)["body"] != "hello" || ed[0]["edited_at"] != t0.Add(time.Minute).Format(time.RFC3339) {
		t.Fatalf("message.edited %v", ed)
	}
	del := eventsOfType(t, st, a.ID, store.EventMessageDeleted)
	if len(del) != 1 || del[0]["message_id"] != float64(res.MessageID) || del[0]["deleted_at"] != t0.Add(2*time.Minute).Format(time.RFC3339) {
		t.Fatalf("message.deleted %v", del)
	}
	var row struct {
		Content json.RawMessage `db:"content"`
		Edited  json.RawMessage `db:"edited_content"`
		Deleted *time.Time      `db:"deleted_at"`
	}
	if err := st.DB().Get(&row, `SELECT content, edited_content, deleted_at FROM messages WHERE id = $1`, res.MessageID); err != nil {
		t.Fatal(err)
	}
	var edited struct {
		Type    string            `json:"type"`
		Content map[string]string `json:"content"`
	}
	_ = json.Unmarshal(row.Edited, &edited)
	if edited.Type != "text" || edited.Content["body"] != "hello" || row.Deleted == nil || len(row.Content) == 0 {
		t.Fatalf("%s %s %v", row.Content, row.Edited, row.Deleted)
	}
}
