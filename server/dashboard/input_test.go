package dashboard_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Every text a dashboard form or query takes is refused with a 400 page naming the field
// when it holds a NUL character or invalid UTF-8 (which PostgreSQL cannot store), never a
// 500; and a page link with a cursor that is malformed or out of range is a 400 page too.
func TestDashboardRefusesTextTheDatabaseCannotStore(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	var contact, endpoint int64
	db := env.Store.DB()
	if err := db.Get(&contact, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '5511987654321', 'Ana') RETURNING id`, acc); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&endpoint, `INSERT INTO webhook_endpoints (account_id, url, secret) VALUES ($1, 'http://127.0.0.1:9/hook', '\x00') RETURNING id`, acc); err != nil {
		t.Fatal(err)
	}
	type form struct {
		method, path string
		fields       []string
		signedIn     bool
	}
	forms := []form{
		{"POST", "/dashboard/signup", []string{"workspace", "email", "password", "invite"}, false},
		{"POST", "/dashboard/signin", []string{"email", "password", "invite"}, false},
		{"GET", "/dashboard/signup", []string{"invite"}, false},
		{"GET", "/dashboard/signin", []string{"invite"}, false},
		{"POST", "/dashboard/password", []string{"current_password", "new_password"}, true},
		{"POST", "/dashboard/keys", []string{"name", "mode"}, true},
		{"POST", "/dashboard/webhooks", []string{"url"}, true},
		{"POST", "/dashboard/connect/token", []string{"waba_id", "phone_number_id", "access_token"}, true},
		{"POST", "/dashboard/connect/embedded", []string{"code", "waba_id", "phone_number_id"}, true},
		{"POST", "/dashboard/invite", []string{"email", "role"}, true},
		{"POST", fmt.Sprintf("/dashboard/contacts/%d", contact), []string{"name", "note"}, true},
		{"POST", "/dashboard/send", []string{"destination", "name", "campaign", "template", "key", "body_1"}, true},
		{"GET", "/dashboard/send", []string{"template", "destination"}, true},
		{"GET", "/dashboard/contacts", []string{"search", "page"}, true},
		{"GET", "/dashboard/messages", []string{"template", "status", "campaign", "contact", "from", "to", "after"}, true},
		{"GET", "/dashboard/templates", []string{"status", "category"}, true},
		{"GET", "/dashboard/request-log", []string{"endpoint", "event", "outcome", "before"}, true},
		{"GET", "/dashboard/campaigns", []string{"before"}, true},
		{"GET", "/dashboard/audit", []string{"before"}, true},
		{"GET", fmt.Sprintf("/dashboard/webhooks/%d", endpoint), []string{"confirm"}, true},
		{"GET", "/dashboard/", []string{"notice"}, true},
	}
	stranger := newUser(t, env)
	for _, f := range forms {
		for _, field := range f.fields {
			for name, bad := range map[string]string{"NUL": "Acme\x00Ltd", "invalid UTF-8": "Acme\xff\xfeLtd"} {
				u := stranger
				if f.signedIn {
					u = owner
				}
				var p page
				if f.method == "GET" {
					p = u.get(f.path + "?" + url.Values{field: {bad}}.Encode())
				} else {
					p = u.post(f.path, url.Values{field: {bad}})
				}
				if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "“"+field+"”") || !strings.Contains(p.Body, "cannot be stored") {
					t.Errorf("%s %s with %s in %s: %d\n%.300s", f.method, f.path, name, field, p.Status, p.Body)
				}
			}
		}
	}

	// Page links whose cursor is not one the page made.
	cursor := func(us int64, id int64) string {
		return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d.%d", us, id)))
	}
	for _, path := range []string{
		"/dashboard/request-log?before=999999999999999999_1",
		"/dashboard/request-log?before=-999999999999999999_1",
		"/dashboard/request-log?before=1_x",
		"/dashboard/request-log?before=1_0",
		"/dashboard/messages?after=not-a-cursor",
		"/dashboard/messages?after=" + cursor(999999999999999999, 1),
		"/dashboard/messages?after=" + cursor(-999999999999999999, 1),
		fmt.Sprintf("/dashboard/contacts/%d?after=%s", contact, cursor(999999999999999999, 1)),
	} {
		p := owner.get(path)
		if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "not valid") {
			t.Errorf("%s: %d\n%.300s", path, p.Status, p.Body)
		}
	}
}

// A form's body past 1 MiB is refused with the dashboard's own page (413), not the API's JSON
// envelope, and changes nothing: the dashboard bounds its bodies itself.
func TestDashboardRefusesAnOversizedForm(t *testing.T) {
	env := newEnv(t, true)
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	form := url.Values{"name": {"Shop server"}, "padding": {strings.Repeat("x", 2<<20)}}
	p := owner.post("/dashboard/keys", form)
	if p.Status != http.StatusRequestEntityTooLarge || !strings.Contains(p.Body, "larger than 1 MiB") || !strings.Contains(p.Body, "<main") {
		t.Fatalf("a 2 MiB form: %d\n%.500s", p.Status, p.Body)
	}
	var keys int
	if err := env.Store.DB().Get(&keys, `SELECT count(*) FROM api_keys WHERE account_id = $1 AND name = 'Shop server'`, acc); err != nil || keys != 0 {
		t.Fatalf("%d keys made by the refused form (%v)", keys, err)
	}
}
