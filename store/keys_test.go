package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"reflect"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// PrincipalsByKeyHashes answers a batch in order, each hash as PrincipalByKeyHash does alone:
// two accounts' keys, a hash twice, an unknown hash, a revoked key and a deactivated account,
// read live.
func TestPrincipalsByKeyHashes(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	b := newAccount(t, st, "beta")
	hash := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	ka, err := st.CreateAPIKey(ctx, a.ID, "live", hash("a-live"), "wak_live_a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAPIKey(ctx, b.ID, "test", hash("b-test"), "wak_test_b"); err != nil {
		t.Fatal(err)
	}
	hashes := [][]byte{hash("b-test"), hash("a-live"), hash("nobody"), hash("a-live")}
	check := func(what string) {
		t.Helper()
		got, err := st.PrincipalsByKeyHashes(ctx, hashes)
		if err != nil || len(got) != len(hashes) {
			t.Fatalf("%s: %d answers, %v", what, len(got), err)
		}
		for i, h := range hashes {
			want, err := st.PrincipalByKeyHash(ctx, h)
			if errors.Is(err, store.ErrNotFound) {
				if got[i].Found {
					t.Fatalf("%s: hash %d found %+v, alone it is unknown", what, i, got[i])
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got[i].Found || !reflect.DeepEqual(got[i].Principal, want) {
				t.Fatalf("%s: hash %d: %+v, alone %+v", what, i, got[i], want)
			}
		}
	}
	check("fresh")
	got, _ := st.PrincipalsByKeyHashes(ctx, hashes)
	if got[0].AccountID != b.ID || got[0].Mode != "test" || got[1].AccountID != a.ID || got[3].AccountID != a.ID || got[2].Found {
		t.Fatalf("answers %+v", got)
	}
	if _, err := st.RevokeAPIKey(ctx, ka.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetAccountActive(ctx, b.ID, false); err != nil {
		t.Fatal(err)
	}
	check("after revoking a's key and deactivating b")
	got, _ = st.PrincipalsByKeyHashes(ctx, hashes)
	if !got[1].Revoked || !got[3].Revoked || got[0].AccountActive {
		t.Fatalf("revocation or deactivation not read live: %+v", got)
	}
}
