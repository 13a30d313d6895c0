package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// A contact's own STOP and START write one audit entry each time they change the contact (none
// for a repeated STOP or a plain message), with no user, and LastBlock finds the STOP in the
// contact's workspace only.
func TestRecordInboundAuditsOptOut(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	b, _ := st.CreateAccount(ctx, "beta", "b@example.com", "beta-1")
	yes, no := true, false
	for i, block := range []*bool{&yes, nil, &yes, &no, &yes} {
		in := inbound(fmt.Sprintf("wamid.O%d", i), "15551112222", "Lee", "x")
		in.Block = block
		if _, err := st.RecordInbound(ctx, a.ID, in); err != nil {
			t.Fatal(err)
		}
	}
	es, err := st.AuditLog(ctx, a.ID, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		if e.Target == "15551112222" {
			if e.UserID != nil {
				t.Errorf("entry %+v has a user", e)
			}
			got = append(got, e.Action+": "+e.Detail)
		}
	}
	want := []string{store.AuditContactBlocked + ": " + store.OptOutDetail, store.AuditContactUnblocked + ": " + store.OptInDetail,
		store.AuditContactBlocked + ": " + store.OptOutDetail}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("audit entries newest first %q, want %q", got, want)
	}
	last, err := st.LastBlock(ctx, a.ID, "15551112222")
	if err != nil || last.Detail != store.OptOutDetail {
		t.Fatalf("LastBlock: %+v %v", last, err)
	}
	if _, err := st.LastBlock(ctx, b.ID, "15551112222"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("LastBlock in another workspace: %v", err)
	}
}
