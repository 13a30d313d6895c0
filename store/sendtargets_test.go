package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

// The cache keeps SendTarget's answers while it is on: a change behind the store's back (here a
// plain UPDATE, as another process would make) is not seen until ForgetSendTargets; the
// store's own writes (a status webhook's pause, a sync, a disconnection) are seen by the next
// call; another account's forget leaves the answer; an answer without templates is not kept;
// turning the cache off reads every time.
func TestSendTargetCache(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	b := newAccount(t, st, "beta")
	if _, err := st.SyncTemplates(ctx, a.ID, []store.TemplateInput{tplIn("1", "reminder", "en_US", "APPROVED", "UTILITY", 2)}); err != nil {
		t.Fatal(err)
	}
	connect := func() {
		t.Helper()
		if _, err := st.ConnectNumber(ctx, store.Connection{AccountID: a.ID, WabaID: "w", PhoneNumberID: "p-cache",
			PhoneNumber: "15550000000", DisplayName: "A", AccessToken: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	connect()
	st.CacheSendTargets(true)
	approved := func() int {
		t.Helper()
		_, ts, err := st.SendTarget(ctx, a.ID, 0, "reminder", "")
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}
	behindTheBack := func(status string) {
		t.Helper()
		if _, err := st.DB().Exec(`UPDATE templates SET status = $2 WHERE account_id = $1`, a.ID, status); err != nil {
			t.Fatal(err)
		}
	}
	if n := approved(); n != 1 {
		t.Fatalf("%d templates, want 1", n)
	}
	behindTheBack("PAUSED")
	if n := approved(); n != 1 {
		t.Fatalf("a change behind the store's back was seen at once (%d templates): the answer is not cached", n)
	}
	st.ForgetSendTargets(b.ID)
	if n := approved(); n != 1 {
		t.Fatalf("another account's forget dropped the answer (%d templates)", n)
	}
	st.ForgetSendTargets(a.ID)
	if n := approved(); n != 0 {
		t.Fatalf("after the account's forget: %d templates, want 0", n)
	}
	// Not kept: no templates. Approved again behind the back, seen at once.
	behindTheBack("APPROVED")
	if n := approved(); n != 1 {
		t.Fatalf("an answer without templates was kept: %d templates", n)
	}
	// The store's own writes forget.
	if err := st.UpdateTemplateStatusByPlatformID(ctx, a.ID, "1", "PAUSED", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := approved(); n != 0 {
		t.Fatalf("after a pause through the store: %d templates", n)
	}
	behindTheBack("APPROVED")
	approved() // cached again
	if _, err := st.SyncTemplates(ctx, a.ID, []store.TemplateInput{tplIn("1", "reminder", "en_US", "REJECTED", "UTILITY", 2)}); err != nil {
		t.Fatal(err)
	}
	if n := approved(); n != 0 {
		t.Fatalf("after a sync: %d templates", n)
	}
	behindTheBack("APPROVED")
	approved()
	if err := st.DisconnectNumber(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.SendTarget(ctx, a.ID, 0, "reminder", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after a disconnection: %v, want ErrNotFound", err)
	}
	// Off: every call reads.
	connect()
	st.CacheSendTargets(false)
	approved()
	behindTheBack("PAUSED")
	if n := approved(); n != 0 {
		t.Fatalf("with the cache off: %d templates, want 0", n)
	}
}
