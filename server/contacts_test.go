package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"gateway/server/servertest"
)

type upsertData struct {
	ContactID int64  `json:"contact_id"`
	Created   bool   `json:"created"`
	Name      string `json:"name"`
	Mobile    string `json:"mobile"`
}

type contactData struct {
	ID      int64     `json:"id"`
	Name    string    `json:"name"`
	Mobile  string    `json:"mobile"`
	Blocked bool      `json:"blocked"`
	Created time.Time `json:"created"`
	Note    *string   `json:"note"`
}

type pagination struct {
	Page  int `json:"page"`
	Pages int `json:"pages"`
	Total int `json:"total"`
}

type contactsPage struct {
	Contacts   []contactData `json:"contacts"`
	Pagination pagination    `json:"pagination"`
}

func upsertContact(t testing.TB, env *servertest.Env, key string, body any) (upsertData, string) {
	t.Helper()
	var d upsertData
	b := wantOK(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: key, Body: body}), &d)
	return d, b.Message
}

func listContacts(t testing.TB, env *servertest.Env, key, query string) contactsPage {
	t.Helper()
	path := "/v1/contacts"
	if query != "" {
		path += "?" + query
	}
	var p contactsPage
	wantOK(t, env.Do(servertest.Request{Method: http.MethodGet, Path: path, Key: key}), &p)
	return p
}

func countRows(t testing.TB, env *servertest.Env, query string, args ...any) int {
	t.Helper()
	var n int
	if err := env.Store.DB().Get(&n, query, args...); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestContactCreateThenUpdate(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	d, msg := upsertContact(t, env, a.Live, map[string]any{
		"mobile": "+55 (11) 98765-4321", "firstname": "Ana", "lastname": "Souza", "note": "Prefers messages after 6 pm"})
	if !d.Created || msg != "Contact created" || d.Name != "Ana Souza" || d.Mobile != "5511987654321" || d.ContactID <= 0 {
		t.Fatalf("create: %q %+v", msg, d)
	}
	first := d.ContactID

	// The same number in another format matches; fields left out keep their values.
	d, msg = upsertContact(t, env, a.Live, map[string]any{"mobile": "5511987654321"})
	if d.Created || msg != "Contact updated" || d.ContactID != first || d.Name != "Ana Souza" || d.Mobile != "5511987654321" {
		t.Fatalf("update without fields: %q %+v", msg, d)
	}
	p := listContacts(t, env, a.Live, "")
	if p.Pagination.Total != 1 || len(p.Contacts) != 1 {
		t.Fatalf("want one contact, got %+v", p)
	}
	c := p.Contacts[0]
	if c.ID != first || c.Name != "Ana Souza" || c.Mobile != "5511987654321" || c.Blocked || c.Note == nil || *c.Note != "Prefers messages after 6 pm" {
		t.Fatalf("stored contact %+v", c)
	}
	if time.Since(c.Created) > time.Minute || c.Created.After(time.Now().Add(time.Minute)) {
		t.Fatalf("created %v is not now", c.Created)
	}

	// A new name and note replace the old ones; the other format with dashes still matches.
	d, msg = upsertContact(t, env, a.Live, map[string]any{"mobile": "+55-11-98765-4321", "firstname": "  Ana Maria ", "lastname": "Silva", "note": "VIP"})
	if d.Created || msg != "Contact updated" || d.ContactID != first || d.Name != "Ana Maria Silva" {
		t.Fatalf("rename: %q %+v", msg, d)
	}
	// The note alone changes the note and keeps the name.
	d, _ = upsertContact(t, env, a.Live, map[string]any{"mobile": "5511987654321", "note": ""})
	if d.Name != "Ana Maria Silva" {
		t.Fatalf("name lost: %+v", d)
	}
	c = listContacts(t, env, a.Live, "").Contacts[0]
	if c.Name != "Ana Maria Silva" || c.Note == nil || *c.Note != "" {
		t.Fatalf("stored contact %+v", c)
	}

	// Firstname only, lastname only.
	d, _ = upsertContact(t, env, a.Live, map[string]any{"mobile": "447700900123", "firstname": "Oliver"})
	if !d.Created || d.Name != "Oliver" {
		t.Fatalf("firstname only: %+v", d)
	}
	d, _ = upsertContact(t, env, a.Live, map[string]any{"mobile": "15551234567", "lastname": "Garcia"})
	if !d.Created || d.Name != "Garcia" {
		t.Fatalf("lastname only: %+v", d)
	}
	// No name at all: an empty name, not an error.
	d, _ = upsertContact(t, env, a.Live, map[string]any{"mobile": "4915123456789"})
	if !d.Created || d.Name != "" {
		t.Fatalf("no name: %+v", d)
	}
	// A leading 00 international prefix is the same number as +.
	d, _ = upsertContact(t, env, a.Live, map[string]any{"mobile": "0044 7700 900123"})
	if d.Created || d.Mobile != "447700900123" || d.Name != "Oliver" {
		t.Fatalf("00 prefix: %+v", d)
	}
	if n := countRows(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.Account.ID); n != 4 {
		t.Fatalf("%d contacts stored, want 4", n)
	}
	// Each creation wrote one contact.created event; updates wrote none.
	if n := countRows(t, env, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`, a.Account.ID); n != 4 {
		t.Fatalf("%d contact.created events, want 4", n)
	}
	var data string
	if err := env.Store.DB().Get(&data, `SELECT data::text FROM events WHERE account_id = $1 AND type = 'contact.created' AND data->>'contact_id' = $2`,
		a.Account.ID, fmt.Sprint(first)); err != nil || !strings.Contains(data, `"5511987654321"`) || !strings.Contains(data, `"Ana Souza"`) {
		t.Fatalf("event data %s, %v", data, err)
	}
}

func TestContactListPagingAndSearch(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	people := []struct{ mobile, first, last string }{
		{"5511987654321", "Ana", "Souza"},
		{"447700900123", "Oliver", "Smith"},
		{"15551234567", "Maria", "Garcia"},
		{"4915123456789", "Jonas", "Schmidt"},
		{"33612345678", "Chloé", "Martin"},
		{"819012345678", "Yuki", "SOUZANOVA"},
		{"34612345000", "Under_score", "100%"},
	}
	var ids []int64 // in creation order
	for _, p := range people {
		d, _ := upsertContact(t, env, a.Live, map[string]any{"mobile": p.mobile, "firstname": p.first, "lastname": p.last})
		ids = append(ids, d.ContactID)
	}
	newestFirst := make([]int64, len(ids))
	for i, id := range ids {
		newestFirst[len(ids)-1-i] = id
	}

	// Default page: all of them, newest first.
	p := listContacts(t, env, a.Live, "")
	if p.Pagination != (pagination{Page: 1, Pages: 1, Total: 7}) {
		t.Fatalf("pagination %+v", p.Pagination)
	}
	if got := contactIDs(p); !equalIDs(got, newestFirst) {
		t.Fatalf("order %v, want %v", got, newestFirst)
	}

	// Pages of 3: 3 + 3 + 1, then an empty page past the end.
	var all []int64
	for page := 1; page <= 4; page++ {
		p := listContacts(t, env, a.Live, fmt.Sprintf("limit=3&page=%d", page))
		want := []int{3, 3, 1, 0}[page-1]
		if len(p.Contacts) != want || p.Pagination.Page != page || p.Pagination.Pages != 3 || p.Pagination.Total != 7 {
			t.Fatalf("page %d: %d contacts, pagination %+v", page, len(p.Contacts), p.Pagination)
		}
		all = append(all, contactIDs(p)...)
	}
	if !equalIDs(all, newestFirst) {
		t.Fatalf("pages gave %v, want %v", all, newestFirst)
	}
	// limit=200 (the maximum) is accepted.
	if p := listContacts(t, env, a.Live, "limit=200"); len(p.Contacts) != 7 || p.Pagination.Pages != 1 {
		t.Fatalf("limit=200: %+v", p.Pagination)
	}

	search := func(q string) []string {
		t.Helper()
		p := listContacts(t, env, a.Live, "search="+url.QueryEscape(q))
		if p.Pagination.Total != len(p.Contacts) {
			t.Fatalf("search %q: total %d for %d contacts", q, p.Pagination.Total, len(p.Contacts))
		}
		var names []string
		for _, c := range p.Contacts {
			names = append(names, c.Name)
		}
		sort.Strings(names)
		return names
	}
	for q, want := range map[string][]string{
		"souza":          {"Ana Souza", "Yuki SOUZANOVA"}, // case-insensitive substring
		"SOUZ":           {"Ana Souza", "Yuki SOUZANOVA"},
		"  olive ":       {"Oliver Smith"}, // trimmed
		"a s":            {"Ana Souza"},    // across first and last name
		"chloé":          {"Chloé Martin"},
		"98765":          {"Ana Souza"}, // mobile digits
		"+55 11":         {"Ana Souza"}, // digits of a formatted number
		"7700900":        {"Oliver Smith"},
		"1234":           {"Chloé Martin", "Jonas Schmidt", "Maria Garcia", "Under_score 100%", "Yuki SOUZANOVA"},
		"%":              {"Under_score 100%"}, // LIKE wildcards are literal
		"_":              {"Under_score 100%"},
		"nobody":         nil,
		"00000000000000": nil,
	} {
		if got := search(q); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("search %q: got %q, want %q", q, got, want)
		}
	}
	// Search and paging together.
	p = listContacts(t, env, a.Live, "search=1234&limit=2&page=3")
	if len(p.Contacts) != 1 || p.Pagination.Total != 5 || p.Pagination.Pages != 3 || p.Pagination.Page != 3 {
		t.Fatalf("search with paging: %d contacts, %+v", len(p.Contacts), p.Pagination)
	}
}

func contactIDs(p contactsPage) []int64 {
	var ids []int64
	for _, c := range p.Contacts {
		ids = append(ids, c.ID)
	}
	return ids
}

func equalIDs(a, b []int64) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func TestContactValidation(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	long := func(n int) string { return strings.Repeat("x", n) }

	get := func(q string) servertest.Request {
		return servertest.Request{Method: http.MethodGet, Path: "/v1/contacts?" + q}
	}
	post := func(body any) servertest.Request {
		return servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Body: body}
	}
	cases := []struct {
		name   string
		req    servertest.Request
		fields []string // every key the errors object must carry
	}{
		{"limit=0", get("limit=0"), []string{"query.limit"}},
		{"limit=201", get("limit=201"), []string{"query.limit"}},
		{"limit=-1", get("limit=-1"), []string{"query.limit"}},
		{"limit=abc", get("limit=abc"), []string{"query.limit"}},
		{"page=0", get("page=0"), []string{"query.page"}},
		{"page=1.5", get("page=1.5"), []string{"query.page"}},
		{"page huge", get("page=99999999999999999999"), []string{"query.page"}},
		{"search over 100", get("search=" + long(101)), []string{"query.search"}},
		{"several parameters", get("limit=0&page=0"), []string{"query.limit", "query.page"}},
		{"mobile missing", post(map[string]any{"firstname": "Ana"}), []string{"mobile"}},
		{"empty object", post(map[string]any{}), []string{"mobile"}},
		{"mobile letters", post(map[string]any{"mobile": "abc"}), []string{"mobile"}},
		{"mobile empty", post(map[string]any{"mobile": ""}), []string{"mobile"}},
		{"mobile too short", post(map[string]any{"mobile": "12"}), []string{"mobile"}},
		{"mobile 7 digits", post(map[string]any{"mobile": "+1 555 123"}), []string{"mobile"}},
		{"mobile 16 digits", post(map[string]any{"mobile": "1234567890123456"}), []string{"mobile"}},
		{"mobile leading zero", post(map[string]any{"mobile": "0123456789"}), []string{"mobile"}},
		{"mobile 00 then zero", post(map[string]any{"mobile": "000123456789"}), []string{"mobile"}},
		{"mobile plus inside", post(map[string]any{"mobile": "55+11987654321"}), []string{"mobile"}},
		{"mobile over 20 chars", post(map[string]any{"mobile": "+55 (11) 98765-4321 0"}), []string{"mobile"}},
		{"mobile a number", post(map[string]any{"mobile": 5511987654321}), []string{"mobile"}},
		{"mobile null", post(map[string]any{"mobile": nil}), []string{"mobile"}},
		{"firstname over 60", post(map[string]any{"mobile": "15551234567", "firstname": long(61)}), []string{"firstname"}},
		{"lastname over 60", post(map[string]any{"mobile": "15551234567", "lastname": long(61)}), []string{"lastname"}},
		{"note over 500", post(map[string]any{"mobile": "15551234567", "note": long(501)}), []string{"note"}},
		{"firstname a number", post(map[string]any{"mobile": "15551234567", "firstname": 7}), []string{"firstname"}},
		{"note an object", post(map[string]any{"mobile": "15551234567", "note": map[string]any{}}), []string{"note"}},
		{"unknown field", post(map[string]any{"mobile": "15551234567", "email": "a@b.c"}), []string{"email"}},
		{"everything wrong", post(map[string]any{"mobile": "abc", "firstname": long(61), "lastname": long(61), "note": long(501), "x": 1}),
			[]string{"mobile", "firstname", "lastname", "note", "x"}},
		{"malformed JSON", post("{\"mobile\": "), []string{"body"}},
		{"not an object", post("[]"), []string{"body"}},
		{"null body", post("null"), []string{"body"}},
		{"empty body", servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Header: map[string]string{"Content-Type": "application/json"}}, []string{"body"}},
		{"not JSON content type", servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Body: `{"mobile":"15551234567"}`,
			Header: map[string]string{"Content-Type": "text/plain"}}, []string{"body"}},
		{"idempotency key too long", servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Body: map[string]any{"mobile": "15551234567"},
			Header: map[string]string{"Idempotency-Key": long(256)}}, []string{"header.Idempotency-Key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Key = a.Live
			b := wantFailure(t, env.Do(c.req), http.StatusUnprocessableEntity, "validation_failed")
			for _, f := range c.fields {
				if len(b.Errors[f]) == 0 || b.Errors[f][0] == "" {
					t.Errorf("errors has no reason for %q: %v", f, b.Errors)
				}
				if !strings.Contains(b.Message, f) {
					t.Errorf("message %q does not name %q", b.Message, f)
				}
			}
			if len(b.Errors) != len(c.fields) {
				t.Errorf("errors %v, want exactly %v", b.Errors, c.fields)
			}
		})
	}
	// None of the refused requests wrote anything.
	if n := countRows(t, env, `SELECT count(*) FROM contacts`); n != 0 {
		t.Fatalf("%d contacts written by refused requests", n)
	}
	// Defaults and bounds that are valid.
	for _, q := range []string{"limit=1", "limit=200", "page=1000000", "search=" + long(100), "search="} {
		listContacts(t, env, a.Live, q)
	}
	for _, body := range []map[string]any{
		{"mobile": "+55 (11) 98765-4321", "firstname": long(60), "lastname": long(60), "note": long(500)},
		{"mobile": "12345678"},
		{"mobile": "123456789012345"},
	} {
		upsertContact(t, env, a.Live, body)
	}
}

func TestContactConcurrentUpsertOneMobile(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	const n = 20
	reqs := make([]servertest.Request, n)
	for i := range reqs {
		// Mixed formats of one number, each with its own name.
		mobile := []string{"+55 (11) 98765-4321", "5511987654321", "55 11 98765 4321", "0055 11 98765-4321"}[i%4]
		reqs[i] = servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live,
			Body: map[string]any{"mobile": mobile, "firstname": fmt.Sprintf("Caller %d", i)}}
	}
	results := env.DoAtOnce(reqs)

	created := 0
	ids := map[int64]bool{}
	for _, r := range results {
		var d upsertData
		b := wantOK(t, r, &d)
		if d.Created {
			created++
			if b.Message != "Contact created" {
				t.Fatalf("created with message %q", b.Message)
			}
		} else if b.Message != "Contact updated" {
			t.Fatalf("updated with message %q", b.Message)
		}
		ids[d.ContactID] = true
	}
	if created != 1 || len(ids) != 1 {
		t.Fatalf("%d responses said created, %d distinct contact ids; want 1 and 1", created, len(ids))
	}
	if n := countRows(t, env, `SELECT count(*) FROM contacts WHERE account_id = $1`, a.Account.ID); n != 1 {
		t.Fatalf("%d contacts, want 1", n)
	}
	if n := countRows(t, env, `SELECT count(*) FROM events WHERE account_id = $1 AND type = 'contact.created'`, a.Account.ID); n != 1 {
		t.Fatalf("%d contact.created events, want 1", n)
	}
	if p := listContacts(t, env, a.Live, ""); p.Pagination.Total != 1 || p.Contacts[0].Mobile != "5511987654321" {
		t.Fatalf("listing %+v", p)
	}
}

func TestContactTestKeyWritesNothing(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	upsertContact(t, env, a.Live, map[string]any{"mobile": "4915123456789", "firstname": "Live", "lastname": "Only"})

	counts := func() [3]int {
		return [3]int{
			countRows(t, env, `SELECT count(*) FROM contacts`),
			countRows(t, env, `SELECT count(*) FROM events`),
			countRows(t, env, `SELECT count(*) FROM contacts WHERE name = 'Zed Test'`),
		}
	}
	before := counts()
	d, msg := upsertContact(t, env, a.Test, map[string]any{"mobile": "+1 (555) 000-9999", "firstname": "Zed", "lastname": "Test", "note": "n"})
	if d.Mobile != "15550009999" || d.Name != "Zed Test" || !d.Created || msg != "Contact created" {
		t.Fatalf("test-mode upsert: %q %+v", msg, d)
	}
	// Upserting a number the live account has: still nothing written, live data untouched.
	upsertContact(t, env, a.Test, map[string]any{"mobile": "4915123456789", "firstname": "Renamed"})
	if after := counts(); after != before {
		t.Fatalf("test key wrote rows: before %v, after %v", before, after)
	}
	// Validation applies in test mode too.
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Test, Body: map[string]any{"mobile": "12"}}),
		http.StatusUnprocessableEntity, "validation_failed")

	// The test key lists fixtures, never the account's live contacts.
	p := listContacts(t, env, a.Test, "")
	if p.Pagination.Total < 1 || len(p.Contacts) != p.Pagination.Total {
		t.Fatalf("fixtures: %+v", p)
	}
	for _, c := range p.Contacts {
		if c.Mobile == "4915123456789" || c.Name == "Zed Test" || c.Name == "Renamed" {
			t.Fatalf("test key sees live or written data: %+v", c)
		}
		if c.ID <= 0 || c.Name == "" || c.Mobile == "" || c.Created.IsZero() {
			t.Fatalf("unrealistic fixture %+v", c)
		}
	}
	first := p.Contacts[0]
	if s := listContacts(t, env, a.Test, "search="+url.QueryEscape(strings.ToUpper(first.Name[:3]))); s.Pagination.Total < 1 {
		t.Fatalf("fixture search for %q found nothing", first.Name[:3])
	}
	if s := listContacts(t, env, a.Test, "limit=1&page=2"); len(s.Contacts) != min(1, p.Pagination.Total-1) || s.Pagination.Total != p.Pagination.Total {
		t.Fatalf("fixture paging: %+v", s)
	}
	// And the live key still sees its one contact, unchanged.
	l := listContacts(t, env, a.Live, "")
	if l.Pagination.Total != 1 || l.Contacts[0].Name != "Live Only" {
		t.Fatalf("live contacts changed: %+v", l)
	}
}

func TestContactIdempotency(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")
	b := env.NewTenant("Beta Inc")
	post := func(key, idem string, body any) *servertest.Response {
		return env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: key, Body: body,
			Header: map[string]string{"Idempotency-Key": idem}})
	}

	first := post(a.Live, "k-1", `{"mobile":"5511987654321","firstname":"Ana","lastname":"Souza"}`)
	var d upsertData
	wantOK(t, first, &d)
	if !d.Created || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %s %v", first.Body, first.Header)
	}
	// Same key, same body (formatted differently): the stored response, byte for byte.
	second := post(a.Live, "k-1", "{ \"lastname\": \"Souza\",\n  \"firstname\": \"Ana\", \"mobile\": \"5511987654321\" }")
	if second.Status != http.StatusOK || string(second.Body) != string(first.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s %v", second.Status, second.Body, second.Header)
	}
	// One contact, one event: the replay did not run the upsert again.
	if n := countRows(t, env, `SELECT count(*) FROM events WHERE account_id = $1`, a.Account.ID); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
	// Same key, another body: 422 idempotency_conflict naming the header.
	r := post(a.Live, "k-1", map[string]any{"mobile": "5511987654321", "firstname": "Someone else"})
	if e := wantFailure(t, r, http.StatusUnprocessableEntity, "idempotency_conflict"); len(e.Errors["header.Idempotency-Key"]) == 0 {
		t.Fatalf("conflict without errors[header.Idempotency-Key]: %s", r.Body)
	}
	if c := listContacts(t, env, a.Live, "").Contacts[0]; c.Name != "Ana Souza" {
		t.Fatalf("the conflicting request changed the contact: %+v", c)
	}
	// Another account may use the same key with the same body independently.
	rb := post(b.Live, "k-1", `{"mobile":"5511987654321","firstname":"Ana","lastname":"Souza"}`)
	var db upsertData
	wantOK(t, rb, &db)
	if !db.Created || db.ContactID == d.ContactID || rb.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("account B: %s %v", rb.Body, rb.Header)
	}
	// Without a key, every POST runs.
	var u upsertData
	wantOK(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live,
		Body: map[string]any{"mobile": "5511987654321", "firstname": "Ana", "lastname": "Souza"}}), &u)
	if u.Created {
		t.Fatalf("no key: %+v", u)
	}
	// A refused request repeated under its key gets the same refusal.
	bad := post(a.Live, "k-2", map[string]any{"mobile": "12"})
	wantFailure(t, bad, http.StatusUnprocessableEntity, "validation_failed")
	if again := post(a.Live, "k-2", map[string]any{"mobile": "12"}); again.Status != bad.Status || string(again.Body) != string(bad.Body) {
		t.Fatalf("repeated 422: %s, first %s", again.Body, bad.Body)
	}
}

func TestContactIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Config{})
	a := env.NewTenant("Acme Ltd")

	const n = 10
	reqs := make([]servertest.Request, n)
	for i := range reqs {
		reqs[i] = servertest.Request{Method: http.MethodPost, Path: "/v1/contacts", Key: a.Live,
			Body: map[string]any{"mobile": "447700900123", "firstname": "Oliver"}, Header: map[string]string{"Idempotency-Key": "same"}}
	}
	results := env.DoAtOnce(reqs)
	replayed := 0
	for i, r := range results {
		if r.Status != http.StatusOK || string(r.Body) != string(results[0].Body) {
			t.Fatalf("response %d: %d %s, want the same as %s", i, r.Status, r.Body, results[0].Body)
		}
		if r.Header.Get("Idempotent-Replayed") == "true" {
			replayed++
		}
	}
	var d upsertData
	wantOK(t, results[0], &d)
	if replayed != n-1 || !d.Created {
		t.Fatalf("%d replays, want %d; %+v", replayed, n-1, d)
	}
	if c := countRows(t, env, `SELECT count(*) FROM events WHERE account_id = $1`, a.Account.ID); c != 1 {
		t.Fatalf("%d events, want 1", c)
	}
}
