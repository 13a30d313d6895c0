package store_test

import (
	"context"
	"fmt"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

// A broadcast's audience and pre-flight reach contacts known only by a user id: the audience
// lists each contact with its number and user id (a contact without a number is no error), and
// the blocked recipients are found by number or by user id, a STOP recorded under the user id
// telling an opt-out from a member's block; another account's contacts are not found.
func TestBroadcastAudienceAndBlockedByUserID(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	a := whAccount(t, s, "a")
	other := whAccount(t, s, "b")
	contact := func(accountID int64, mobile, userID string, blocked bool) int64 {
		t.Helper()
		var id int64
		if err := s.DB().Get(&id, `INSERT INTO contacts (account_id, mobile, user_id, firstname, blocked)
			VALUES ($1, NULLIF($2, ''), NULLIF($3, ''), 'X', $4) RETURNING id`, accountID, mobile, userID, blocked); err != nil {
			t.Fatal(err)
		}
		return id
	}
	ids := []int64{contact(a.ID, "447700900001", "", false), contact(a.ID, "", "US.1", false), contact(a.ID, "447700900003", "US.3", false)}
	contact(a.ID, "447700900004", "", true)
	contact(a.ID, "", "US.5", true)
	contact(a.ID, "", "US.6", true)
	contact(other.ID, "", "US.7", true)
	if _, err := s.TagContacts(ctx, a.ID, "vip", ids); err != nil {
		t.Fatal(err)
	}
	members, err := s.AudienceMembers(ctx, a.ID, store.AudienceFilter{Tags: []string{"vip"}}, 0, 10)
	if err != nil || len(members) != 3 {
		t.Fatalf("audience: %+v, %v; want 3 members", members, err)
	}
	if m := members[1]; m.Mobile != "" || m.UserID != "US.1" {
		t.Fatalf("the member known by a user id: %+v", m)
	}
	if m := members[2]; m.Mobile != "447700900003" || m.UserID != "US.3" {
		t.Fatalf("the member known by both: %+v", m)
	}
	// US.5 replied STOP (an entry with no member); US.6 and 447700900004 were blocked by a member.
	if err := s.AddAudit(ctx, a.ID, 0, store.AuditContactBlocked, "US.5", store.OptOutDetail); err != nil {
		t.Fatal(err)
	}
	got, err := s.BlockedRecipients(ctx, a.ID, []string{"447700900001", "447700900004"}, []string{"US.1", "US.5", "US.6", "US.7"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"447700900004": false, "US.5": true, "US.6": false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("blocked %v, want %v", got, want)
	}
}
