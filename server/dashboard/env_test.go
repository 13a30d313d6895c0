package dashboard_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"gateway/server/dashboard"
	"gateway/server/servertest"
	"gateway/store"
)

// testConnector stands in for server/onboarding: it stores the connection as the real one
// does at its last step. The token "bad" fails the way a platform refusal would.
type testConnector struct{ st *store.Store }

var errBadToken = errors.New("validate the token: the platform answered (#190) Invalid OAuth access token")

func (c *testConnector) connect(ctx context.Context, accountID int64, waba, pn, token string) (store.Connection, error) {
	if token == "bad" {
		return store.Connection{}, errBadToken
	}
	return c.st.ConnectNumber(ctx, store.Connection{AccountID: accountID, WabaID: waba, PhoneNumberID: pn,
		PhoneNumber: "15550001234", DisplayName: "Flow Test Co", AccessToken: token})
}

func (c *testConnector) ConnectWithCode(ctx context.Context, accountID int64, code, waba, pn string) (store.Connection, error) {
	return c.connect(ctx, accountID, waba, pn, "token-for-"+code)
}

func (c *testConnector) ConnectWithToken(ctx context.Context, accountID int64, waba, pn, token string) (store.Connection, error) {
	return c.connect(ctx, accountID, waba, pn, token)
}

// newEnv starts the gateway with the dashboard; development selects the plain "session"
// cookie that works over http.
func newEnv(t testing.TB, development bool) *servertest.Env {
	t.Helper()
	c := &testConnector{}
	env := servertest.New(t, servertest.Config{
		Dashboard: dashboard.Options{Development: development, SignupOpen: true, WebhookAllowPrivate: true,
			PlatformAppID: "app-1", PlatformESConfigID: "cfg-1"},
		Connector: c,
	})
	c.st = env.Store
	return env
}

// user is a browser-like HTTP client with a cookie jar, not following redirects.
type user struct {
	t    testing.TB
	base string
	c    *http.Client
}

func newUser(t testing.TB, env *servertest.Env) *user {
	jar, _ := cookiejar.New(nil)
	return &user{t: t, base: env.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	Status int
	Header http.Header
	Body   string
}

func (u *user) do(method, path string, form url.Values, hdr map[string]string) page {
	u.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u.base+path, body)
	if err != nil {
		u.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := u.c.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

func (u *user) get(path string) page { u.t.Helper(); return u.do("GET", path, nil, nil) }

func (u *user) post(path string, form url.Values) page {
	u.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	return u.do("POST", path, form, map[string]string{"Sec-Fetch-Site": "same-origin"})
}

// signUp creates a workspace through the form and returns its signed-in owner.
func signUp(t testing.TB, env *servertest.Env, workspace, email string) *user {
	t.Helper()
	u := newUser(t, env)
	p := u.post("/dashboard/signup", url.Values{"workspace": {workspace}, "email": {email}, "password": {"correct horse battery"}})
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/" {
		t.Fatalf("sign-up: %d %s\n%s", p.Status, p.Header.Get("Location"), p.Body)
	}
	return u
}

var (
	reKeyCode = regexp.MustCompile(`<code id="new-key">([^<]+)</code>`)
	reSecret  = regexp.MustCompile(`<code id="secret">([^<]+)</code>`)
)

func find(t testing.TB, re *regexp.Regexp, body string) string {
	t.Helper()
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%s not found in:\n%s", re, body)
	}
	return m[1]
}

// accountOf returns the workspace id of the user with email.
func accountOf(t testing.TB, st *store.Store, email string) int64 {
	t.Helper()
	var id int64
	if err := st.DB().Get(&id, `SELECT m.account_id FROM memberships m JOIN users u ON u.id = m.user_id WHERE lower(u.email) = lower($1)`, email); err != nil {
		t.Fatal(err)
	}
	return id
}

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// mustInviteToken is the token of the invitation link an invite page shows once.
func mustInviteToken(t *testing.T, body string) string {
	t.Helper()
	link, err := url.Parse(find(t, regexpMust(`<code id="invite-link">([^<]+)</code>`), body))
	if err != nil || link.Query().Get("invite") == "" {
		t.Fatalf("no invitation link: %v", err)
	}
	return link.Query().Get("invite")
}
