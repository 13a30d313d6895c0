package server_test

import (
	"net/url"
	"testing"

	"gateway/server/servertest"
)

// POST /contacts keeps firstname and lastname as stored fields: a partial update replaces only
// the part it names, and name stays their join. A contact whose name came whole (an inbound
// profile name) is split at the first space.
func TestContactPartialNameUpdate(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	steps := []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"mobile": "5511987654321", "firstname": "Ana", "lastname": "Souza"}, "Ana Souza"},
		{map[string]any{"mobile": "5511987654321", "lastname": "Lima"}, "Ana Lima"},
		{map[string]any{"mobile": "5511987654321", "firstname": " Ana Maria "}, "Ana Maria Lima"},
		{map[string]any{"mobile": "5511987654321", "note": "VIP"}, "Ana Maria Lima"},
		{map[string]any{"mobile": "5511987654321", "firstname": ""}, "Lima"},
		{map[string]any{"mobile": "5511987654321", "firstname": "Bea", "lastname": ""}, "Bea"},
	}
	for i, s := range steps {
		if d, _ := upsertContact(t, env, a.Live, s.body); d.Name != s.want {
			t.Fatalf("step %d %v: name %q, want %q", i, s.body, d.Name, s.want)
		}
	}
	if _, err := env.Store.DB().Exec(`INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '15550001111', 'Carlos Alberto Pereira')`,
		a.Account.ID); err != nil {
		t.Fatal(err)
	}
	if d, _ := upsertContact(t, env, a.Live, map[string]any{"mobile": "15550001111", "lastname": "Silva"}); d.Name != "Carlos Silva" {
		t.Fatalf("a whole name split at the first space, then the lastname replaced: %q", d.Name)
	}
}

// A search term matches the mobile only when it is a phone fragment (digits, optionally with
// + spaces dashes and parentheses); any other term matches the name only, so a name search
// with a digit in it does not return every contact whose number has that digit.
func TestContactSearchPhoneFragment(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	upsertContact(t, env, a.Live, map[string]any{"mobile": "15558880000", "firstname": "Ana"})
	upsertContact(t, env, a.Live, map[string]any{"mobile": "15551112222", "firstname": "Team", "lastname": "yxu8uamq"})
	for _, c := range []struct {
		search string
		want   []string
	}{
		{"yxu8uamq", []string{"Team yxu8uamq"}},
		{"8", []string{"Ana", "Team yxu8uamq"}}, // a phone fragment: Ana's mobile; Team's name has an 8 too
		{"888", []string{"Ana"}},
		{"+1 (555) 888-0", []string{"Ana"}},
		{"ana 8", nil},
		{"u8u", []string{"Team yxu8uamq"}},
	} {
		p := listContacts(t, env, a.Live, "search="+url.QueryEscape(c.search))
		var got []string
		for _, ct := range p.Contacts {
			got = append(got, ct.Name)
		}
		if len(got) != len(c.want) || p.Pagination.Total != len(c.want) {
			t.Fatalf("search %q: %v (total %d), want %v", c.search, got, p.Pagination.Total, c.want)
		}
		for _, w := range c.want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Fatalf("search %q: %v, want %v", c.search, got, c.want)
			}
		}
	}
}
