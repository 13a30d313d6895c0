package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func TestJoinSandbox(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-42")
	id, err := st.JoinSandbox(ctx, "ACME-42", "15551112222", t0)
	if err != nil || id != a.ID {
		t.Fatalf("%d %v", id, err)
	}
	if _, err := st.JoinSandbox(ctx, "acme-42", "15551112222", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.JoinSandbox(ctx, "acme-42", "15551112222", t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	var joined time.Time
	if err := st.DB().Get(&joined, `SELECT joined_at FROM sandbox_participants WHERE account_id = $1 AND phone = '15551112222'`, a.ID); err != nil || !joined.Equal(t0.Add(time.Hour)) {
		t.Fatalf("joined_at %v %v", joined, err)
	}
	if _, err := st.JoinSandbox(ctx, "nope", "15551112222", t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown code: %v", err)
	}
}
