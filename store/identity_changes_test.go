package store_test

import (
	"context"
	"errors"
	"testing"

	"gateway/store"
	"gateway/store/storetest"
)

func TestChangeContactNumberKeepsThePerson(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "renumber")
	in := inbound("wamid.N1", "4915112345678", "Ann", "hi")
	in.UserID = "US.99"
	first, err := st.RecordInbound(ctx, a.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetContactBlocked(ctx, a.ID, "4915112345678", true); err != nil {
		t.Fatal(err)
	}
	c, err := st.ChangeContactNumber(ctx, a.ID, store.NumberChange{UserID: "US.99", OldMobile: "4915112345678", NewMobile: "4915199999999"})
	if err != nil || c.ID != first.ContactID || c.Mobile != "4915199999999" || !c.Blocked {
		t.Fatalf("%+v %v", c, err)
	}
	up := eventsOfType(t, st, a.ID, store.EventContactUpdated)
	if len(up) != 1 || up[0]["reason"] != store.ContactNumberChanged || up[0]["mobile"] != "4915199999999" ||
		up[0]["previous"].(map[string]any)["mobile"] != "4915112345678" {
		t.Fatalf("%v", up)
	}
	// The old number is no longer the person.
	if _, err := st.ContactByMobile(ctx, a.ID, "4915112345678"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("old number still found: %v", err)
	}
	if got, err := st.ContactByMobile(ctx, a.ID, "4915199999999"); err != nil || got.ID != first.ContactID || !got.Blocked {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := st.ChangeContactNumber(ctx, a.ID, store.NumberChange{UserID: "US.nobody", NewMobile: "4915100000000"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown person: %v", err)
	}
}

func TestChangeContactNumberMergesTheNewNumbersContact(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "renumber2")
	in := inbound("wamid.N1", "4915112345678", "Ann", "hi")
	in.UserID = "US.99"
	first, err := st.RecordInbound(ctx, a.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := st.UpsertContact(ctx, a.ID, store.ContactInput{Mobile: "4915199999999"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetContactBlocked(ctx, a.ID, "4915199999999", true); err != nil {
		t.Fatal(err)
	}
	c, err := st.ChangeContactNumber(ctx, a.ID, store.NumberChange{UserID: "US.99", NewMobile: "4915199999999"})
	if err != nil || c.ID != first.ContactID || c.Mobile != "4915199999999" || !c.Blocked {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := st.ContactByID(ctx, a.ID, other.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("holder of the new number kept: %v", err)
	}
	page, err := st.ListContacts(ctx, a.ID, "", 50, 0)
	if err != nil || page.Total != 1 {
		t.Fatalf("%+v %v", page, err)
	}
}

func TestRelinkContactUserID(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "relink")
	first, err := st.RecordInbound(ctx, a.ID, userOnly("wamid.R1", "US.1", "", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.RelinkContactUserID(ctx, a.ID, store.UserIDChange{PreviousUserID: "US.1", UserID: "US.2", ParentUserID: "US.ENT.3"})
	if err != nil || c.ID != first.ContactID || c.UserID != "US.2" || c.ParentUserID != "US.ENT.3" {
		t.Fatalf("%+v %v", c, err)
	}
	up := eventsOfType(t, st, a.ID, store.EventContactUpdated)
	if len(up) != 1 || up[0]["reason"] != store.ContactUserIDChanged || up[0]["user_id"] != "US.2" ||
		up[0]["previous"].(map[string]any)["user_id"] != "US.1" {
		t.Fatalf("%v", up)
	}
	res, err := st.RecordInbound(ctx, a.ID, userOnly("wamid.R2", "US.2", "", "again"))
	if err != nil || res.ContactID != first.ContactID || res.ContactCreated {
		t.Fatalf("%+v %v", res, err)
	}
}
