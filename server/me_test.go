package server_test

import (
	"context"
	"net/http"
	"testing"

	"gateway/server/servertest"
	"gateway/store"
)

func TestGetMe(t *testing.T) {
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	r := env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: a.Live})
	if r.Status != http.StatusOK {
		t.Fatalf("status %d %s", r.Status, r.Body)
	}
	var got struct {
		Data struct {
			Account struct{ ID int64 }
			Chat    struct {
				Connected     bool
				PhoneNumber   string `json:"phone_number"`
				PhoneNumberID string `json:"phone_number_id"`
			}
		}
	}
	r.JSON(t, &got)
	if got.Data.Account.ID != a.Account.ID || got.Data.Chat.Connected || got.Data.Chat.PhoneNumber != "" {
		t.Fatalf("unexpected %s", r.Body)
	}

	// Connecting a number shows on the very next call.
	if _, err := env.Store.ConnectNumber(context.Background(), store.Connection{AccountID: a.Account.ID, WabaID: "waba-1",
		PhoneNumberID: "pnid-1", PhoneNumber: "15550783881", DisplayName: "Acme Support", AccessToken: "tok"}); err != nil {
		t.Fatal(err)
	}
	r = env.Do(servertest.Request{Method: "GET", Path: "/v1/me", Key: a.Live})
	r.JSON(t, &got)
	if !got.Data.Chat.Connected || got.Data.Chat.PhoneNumber != "15550783881" || got.Data.Chat.PhoneNumberID != "pnid-1" {
		t.Fatalf("unexpected %s", r.Body)
	}
}
