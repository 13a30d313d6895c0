package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"gateway/store"
)

// Tags on the contacts page: the selected rows (another workspace's ids ignored) or the whole
// listing narrowed to a tag, removed the same ways; the list filtered by a tag; an audience
// saved from tags and listed with its count (blocked contacts left out); all audited.
func TestContactTagsAndAudiences(t *testing.T) {
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	signUp(t, env, "Beta", "bob@beta.example")
	beta := accountOf(t, env.Store, "bob@beta.example")
	ctx := context.Background()
	var ids []string
	for i := range 4 {
		c, _, err := env.Store.UpsertContact(ctx, acct, store.ContactInput{Mobile: fmt.Sprintf("1415555010%d", i), Name: ptr(fmt.Sprintf("Person %d", i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(c.ID, 10))
	}
	foreign, _, err := env.Store.UpsertContact(ctx, beta, store.ContactInput{Mobile: "14155550199"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.SetContactBlocked(ctx, acct, "14155550103", true); err != nil {
		t.Fatal(err)
	}

	p := u.post("/dashboard/contacts/tags", url.Values{"tag": {"vip"}, "action": {"tag"}, "scope": {"selected"},
		"id": {ids[0], ids[1], ids[3], strconv.FormatInt(foreign.ID, 10)}})
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/contacts?notice=tagged" {
		t.Fatalf("tag selected: %d %s\n%s", p.Status, p.Header.Get("Location"), p.Body)
	}
	page := u.get("/dashboard/contacts?tag=vip")
	if !strings.Contains(page.Body, "3 contacts tagged “vip”") || strings.Contains(page.Body, "Person 2") {
		t.Errorf("list filtered by vip:\n%s", page.Body)
	}
	if n, _ := env.Store.AudienceCount(ctx, beta, store.AudienceFilter{Tags: []string{"vip"}}); n != 0 {
		t.Errorf("another workspace's contact was tagged (%d)", n)
	}
	// The whole listing narrowed to vip gets "gold"; then gold leaves Person 1 only.
	if p = u.post("/dashboard/contacts/tags", url.Values{"tag": {"gold"}, "action": {"tag"}, "scope": {"all"}, "filter_tag": {"vip"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("tag all: %d\n%s", p.Status, p.Body)
	}
	if p = u.post("/dashboard/contacts/tags", url.Values{"tag": {"gold"}, "action": {"untag"}, "scope": {"selected"}, "id": {ids[0]}}); p.Status != http.StatusSeeOther {
		t.Fatalf("untag: %d", p.Status)
	}
	if page = u.get("/dashboard/contacts?tag=gold&search=person"); !strings.Contains(page.Body, "2 contacts tagged “gold” match “person”") {
		t.Errorf("gold list: %s", page.Body)
	}
	for _, bad := range []url.Values{
		{"tag": {""}, "action": {"tag"}, "scope": {"selected"}, "id": {ids[0]}},
		{"tag": {"x"}, "action": {"tag"}, "scope": {"selected"}},
		{"tag": {"x"}, "action": {"tag"}, "scope": {"all"}, "search": {"person"}},
		{"tag": {strings.Repeat("t", 101)}, "action": {"tag"}, "scope": {"selected"}, "id": {ids[0]}},
	} {
		if p := u.post("/dashboard/contacts/tags", bad); p.Status != http.StatusBadRequest {
			t.Errorf("%v: %d, want 400", bad, p.Status)
		}
	}

	// An audience of vip and gold: Person 1 and the blocked Person 3, who is left out.
	if p = u.post("/dashboard/audiences", url.Values{"name": {"Best"}, "tags": {"vip", "gold"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("save audience: %d\n%s", p.Status, p.Body)
	}
	page = u.get("/dashboard/audiences")
	if !strings.Contains(page.Body, `<td data-label="Name">Best</td>`) || !strings.Contains(page.Body, `class="audience-count">1</td>`) {
		t.Errorf("audiences page:\n%s", page.Body)
	}
	if p = u.post("/dashboard/audiences", url.Values{"name": {"Best"}, "tags": {"vip"}}); p.Status != http.StatusConflict {
		t.Errorf("a second audience named Best: %d", p.Status)
	}
	if p = u.post("/dashboard/audiences", url.Values{"name": {"No tags"}}); p.Status != http.StatusUnprocessableEntity {
		t.Errorf("an audience without tags: %d", p.Status)
	}
	as, err := env.Store.Audiences(ctx, acct)
	if err != nil || len(as) != 1 {
		t.Fatalf("audiences %v %v", as, err)
	}
	other := signUp(t, env, "Gamma", "gus@gamma.example")
	if p = other.post(fmt.Sprintf("/dashboard/audiences/%d/delete", as[0].ID), nil); p.Status != http.StatusNotFound {
		t.Errorf("another workspace deleted the audience: %d", p.Status)
	}
	if p = u.post(fmt.Sprintf("/dashboard/audiences/%d/delete", as[0].ID), nil); p.Status != http.StatusSeeOther {
		t.Errorf("delete: %d", p.Status)
	}
	audit := auditActions(t, env, acct)
	for _, want := range []string{"contacts.tagged vip 3 contacts", "contacts.tagged gold 3 contacts", "contacts.untagged gold 1 contacts", "audience.saved Best tags vip, gold", "audience.deleted"} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log lacks %q:\n%s", want, audit)
		}
	}
}

func ptr[T any](v T) *T { return &v }
