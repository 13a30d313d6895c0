package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// A media id is the account's when one of its inbound media messages carries it, whichever way
// the message's content keeps the media object (the platform's message as received, the typed
// object under "media", or the typed object itself), or when it uploaded it; never another
// account's. An upload is found before an inbound message with the same id.
func TestMediaByID(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "media")
	b := newAccount(t, st, "other")
	shapes := map[string]string{
		"111": `{"from":"4915112345678","id":"wamid.M1","type":"image","image":{"id":"111","mime_type":"image/jpeg","sha256":"c2hh","caption":"hi"}}`,
		"222": `{"media":{"id":"222","mime_type":"application/pdf","sha256":"abc","filename":"a.pdf"}}`,
		"333": `{"id":"333","mime_type":"audio/ogg; codecs=opus","sha256":"def","voice":true}`,
	}
	types := map[string]string{"111": "image", "222": "document", "333": "audio"}
	for id, content := range shapes {
		in := inbound("wamid.M"+id, "4915112345678", "Ann", "")
		in.Type, in.Content = types[id], json.RawMessage(content)
		if _, err := st.RecordInbound(ctx, a.ID, in); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]store.MediaObject{
		"111": {MediaID: "111", Origin: store.MediaInbound, MimeType: "image/jpeg", SHA256: "c2hh"},
		"222": {MediaID: "222", Origin: store.MediaInbound, MimeType: "application/pdf", SHA256: "abc", Filename: "a.pdf"},
		"333": {MediaID: "333", Origin: store.MediaInbound, MimeType: "audio/ogg; codecs=opus", SHA256: "def"},
	}
	for id, w := range want {
		got, err := st.MediaByID(ctx, a.ID, id)
		if err != nil || got.MessageID == 0 {
			t.Fatalf("%s: %+v %v", id, got, err)
		}
		got.MessageID = 0
		if got != w {
			t.Fatalf("%s: %+v, want %+v", id, got, w)
		}
		if _, err := st.MediaByID(ctx, b.ID, id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s read by another account: %v", id, err)
		}
	}
	// A text message's wamid is not a media id.
	if _, err := st.MediaByID(ctx, a.ID, "wamid.M111"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a wamid as a media id: %v", err)
	}

	up := store.MediaUploadRecord{MediaID: "111", Kind: "image", MimeType: "image/png", Size: 42, SHA256: strings.Repeat("ab", 32), Filename: "logo.png"}
	for range 2 {
		if err := st.RecordMediaUpload(ctx, a.ID, up); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.MediaByID(ctx, a.ID, "111")
	if err != nil || got != (store.MediaObject{MediaID: "111", Origin: store.MediaUpload, MimeType: "image/png", SHA256: up.SHA256, Size: 42, Filename: "logo.png"}) {
		t.Fatalf("upload: %+v %v", got, err)
	}
	if _, err := st.MediaByID(ctx, b.ID, "111"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another account's upload: %v", err)
	}

	// The inbound lookup's expression is the partial index's: with sequential scans off, the
	// plan reads the index.
	tx, err := st.DB().Beginx()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var plan []string
	if _, err := tx.Exec(`SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Select(&plan, `EXPLAIN SELECT id FROM messages m WHERE m.account_id = $1 AND m.direction = 'in'
		AND m.type IN ('image', 'video', 'audio', 'document', 'sticker')
		AND COALESCE(m.content -> m.type ->> 'id', m.content -> 'media' ->> 'id', m.content ->> 'id') = $2`, a.ID, "111"); err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "messages_inbound_media_idx") {
		t.Fatalf("the inbound media lookup does not use its index:\n%s", p)
	}
}
