package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"gateway/server/domain"
	"gateway/store"
	"gateway/store/storetest"
)

// storeOnlyServer is a Server with only a store (on its own database) and a silent log, and an
// account in that store: enough for the methods that only read and write the database.
func storeOnlyServer(t *testing.T) (*Server, store.Account) {
	t.Helper()
	st := storetest.New(t)
	a, err := st.CreateAccount(context.Background(), "acme", "acme@example.com", fmt.Sprintf("acme-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	return &Server{store: st, log: slog.New(slog.NewTextHandler(io.Discard, nil))}, a
}

// A poll's key-and-message read does not follow the request's cancellation: with the
// request's context already cancelled it still reads the key and the message (see lookupKey).
func TestPollReadIgnoresCancellation(t *testing.T) {
	t.Parallel()
	s, a := storeOnlyServer(t)
	st, ctx := s.store, context.Background()
	key, hash, _, err := domain.GenerateKey(domain.ModeLive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAPIKey(ctx, a.ID, domain.ModeLive, hash, key[:12]); err != nil {
		t.Fatal(err)
	}
	rec, err := st.BeginSend(ctx, a.ID, store.SendInput{Mobile: "15550000001", Name: "Ana", CampaignName: "API",
		TemplateID: 7, TemplateName: "welcome", Content: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	p, m, err := s.lookupKey(cancelled, hash, rec.MessageID)
	if err != nil || m == nil || m.ID != rec.MessageID || p.AccountID != a.ID {
		t.Fatalf("read under a cancelled request: principal %+v, message %+v, %v", p, m, err)
	}
}
