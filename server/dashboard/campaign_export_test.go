package dashboard_test

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/server/dashboard"
	"gateway/server/servertest"
)

// exportEnv is the gateway with the dashboard and the export settings of opts (the rest of
// the dashboard's options are the tests' usual ones).
func exportEnv(t *testing.T, opts dashboard.Options) *servertest.Env {
	t.Helper()
	opts.Development, opts.SignupOpen, opts.WebhookAllowPrivate = true, true, true
	return servertest.New(t, servertest.Config{Dashboard: opts})
}

// seedLargeCampaign writes a campaign of n outbound messages to one contact in one statement
// and returns its id.
func seedLargeCampaign(t *testing.T, env *servertest.Env, accountID int64, n int) int64 {
	t.Helper()
	db := env.Store.DB()
	var contact, conv, campaign int64
	for _, q := range []struct {
		dst  *int64
		stmt string
	}{
		{&contact, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '5511987654321', 'Ana Souza') RETURNING id`},
		{&conv, `INSERT INTO conversations (account_id, contact_id) SELECT $1, id FROM contacts WHERE account_id = $1 RETURNING id`},
		{&campaign, `INSERT INTO campaigns (account_id, name) VALUES ($1, 'Black Friday') RETURNING id`},
	} {
		if err := db.Get(q.dst, q.stmt, accountID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type, destination,
			template_name, content, platform_message_id, status, created_at, sent_at)
		SELECT $1, $2, $3, $4, 'out', 'template', '5511987654321', 'black_friday', '{"language": "en_US"}',
			'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjAwMDAwMDAwMDAwMDAwMDAw-' || i, 'sent',
			timestamptz '2026-11-27 09:00:00Z' + i * interval '1 millisecond', timestamptz '2026-11-27 09:00:01Z' + i * interval '1 millisecond'
		FROM generate_series(1, $5::int) i`, accountID, contact, conv, campaign, n); err != nil {
		t.Fatal(err)
	}
	return campaign
}

// stalledDownload is an export request on its own connection, with a small receive buffer,
// whose body nobody reads until resume.
type stalledDownload struct {
	conn net.Conn
	resp *http.Response
}

func startStalledDownload(t *testing.T, env *servertest.Env, cookie *http.Cookie, path string) (*stalledDownload, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(env.URL, "http://"), 5*time.Second)
	if err != nil {
		return nil, err
	}
	// A small receive buffer: the file cannot sit in the client's kernel while it stalls.
	conn.(*net.TCPConn).SetReadBuffer(16 << 10)
	req, _ := http.NewRequest("GET", env.URL+path, nil)
	req.AddCookie(cookie)
	req.Close = true
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4096), req)
	if err != nil {
		conn.Close()
		return nil, err
	}
	// A test that fails before resuming still frees the server's handler.
	t.Cleanup(func() { conn.Close() })
	return &stalledDownload{conn: conn, resp: resp}, nil
}

// resume reads the rest of the file.
func (d *stalledDownload) resume() (string, error) {
	defer d.conn.Close()
	d.conn.SetDeadline(time.Now().Add(60 * time.Second))
	d.conn.(*net.TCPConn).SetReadBuffer(1 << 20)
	b, err := io.ReadAll(d.resp.Body)
	return string(b), err
}

func sessionOf(t *testing.T, env *servertest.Env, u *user) *http.Cookie {
	t.Helper()
	base, _ := url.Parse(env.URL + "/dashboard/")
	for _, c := range u.c.Jar.Cookies(base) {
		if c.Name == "session" {
			return c
		}
	}
	t.Fatal("no session cookie")
	return nil
}

// checkExport parses a complete export: the header, n message rows and the trailer that says
// n.
func checkExport(t *testing.T, body string, n int) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v", err)
	}
	if len(rows) != n+2 || rows[0][0] != "message_id" {
		t.Fatalf("%d records, want the header, %d messages and the trailer", len(rows), n)
	}
	last := rows[len(rows)-1]
	if last[0] != "# end of export" || last[1] != strconv.Itoa(n) {
		t.Fatalf("trailer %q, want # end of export and %d", last, n)
	}
}

// Sixteen exports of a large campaign whose clients stop reading do not hold the database:
// another tenant's GET /v1/me and /readyz answer in their usual time meanwhile, and each file
// arrives whole, with its trailer, once its client reads again.
func TestCampaignExportStalledClientsKeepTheAPIAnswering(t *testing.T) {
	const messages, downloads = 40000, 16
	env := exportEnv(t, dashboard.Options{ExportsPerWorkspace: downloads})
	owner := signUp(t, env, "Acme", "owner@acme.example")
	campaign := seedLargeCampaign(t, env, accountOf(t, env.Store, "owner@acme.example"), messages)
	other := env.NewTenant("Other Co")
	me := func() (time.Duration, int) {
		t.Helper()
		start := time.Now()
		c := &http.Client{Timeout: 10 * time.Second}
		req, _ := http.NewRequest("GET", env.URL+"/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+other.Live)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET /v1/me: %v (after %v)", err, time.Since(start))
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start), resp.StatusCode
	}
	var usual time.Duration
	for range 5 {
		d, _ := me()
		usual = max(usual, d)
	}

	cookie := sessionOf(t, env, owner)
	path := fmt.Sprintf("/dashboard/campaigns/%d/export.csv", campaign)
	var stalled []*stalledDownload
	for range downloads {
		d, err := startStalledDownload(t, env, cookie, path)
		if err != nil {
			t.Fatal(err)
		}
		if d.resp.StatusCode != http.StatusOK {
			t.Fatalf("export: %d", d.resp.StatusCode)
		}
		stalled = append(stalled, d)
	}
	// Wait (bounded) until the server has filled every connection's buffers and blocks on
	// writing: no pooled connection in use for 300 ms running. Before the fix the stalled
	// exports held 16 connections throughout.
	quietSince, inUse := time.Time{}, 0
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if inUse = env.Store.DB().Stats().InUse; inUse > 0 {
			quietSince = time.Time{}
		} else if quietSince.IsZero() {
			quietSince = time.Now()
		} else if time.Since(quietSince) > 300*time.Millisecond {
			break
		}
	}

	var worst time.Duration
	for range 5 {
		d, status := me()
		if status != http.StatusOK {
			t.Fatalf("GET /v1/me: %d while the exports stall", status)
		}
		worst = max(worst, d)
	}
	ready, err := (&http.Client{Timeout: 10 * time.Second}).Get(env.URL + "/readyz")
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	ready.Body.Close()
	t.Logf("GET /v1/me: %v at most before the exports, %v at most with %d stalled exports of %d messages (%d pooled connections in use when measured)",
		usual, worst, downloads, messages, inUse)
	if ready.StatusCode != http.StatusOK {
		t.Errorf("readyz: %d while the exports stall", ready.StatusCode)
	}
	if worst > 2*time.Second {
		t.Errorf("GET /v1/me took %v with the exports stalled", worst)
	}

	var wg sync.WaitGroup
	bodies := make([]string, downloads)
	errs := make([]error, downloads)
	for i, d := range stalled {
		wg.Go(func() { bodies[i], errs[i] = d.resume() })
	}
	wg.Wait()
	for i := range stalled {
		if errs[i] != nil {
			t.Fatalf("download %d: %v", i, errs[i])
		}
		checkExport(t, bodies[i], messages)
	}
}

// A workspace runs at most ExportsPerWorkspace downloads at once: one more is a 429 page that
// says so, while another workspace's download goes ahead. A client that stops reading for
// longer than ExportStallTimeout is cut (its file has no trailer) and its slot is free again.
func TestCampaignExportCapAndStallTimeout(t *testing.T) {
	const messages = 30000
	env := exportEnv(t, dashboard.Options{ExportsPerWorkspace: 2, ExportStallTimeout: 300 * time.Millisecond})
	owner := signUp(t, env, "Acme", "owner@acme.example")
	campaign := seedLargeCampaign(t, env, accountOf(t, env.Store, "owner@acme.example"), messages)
	path := fmt.Sprintf("/dashboard/campaigns/%d/export.csv", campaign)
	cookie := sessionOf(t, env, owner)
	var stalled []*stalledDownload
	for range 2 {
		d, err := startStalledDownload(t, env, cookie, path)
		if err != nil || d.resp.StatusCode != http.StatusOK {
			t.Fatalf("export: %v %v", d, err)
		}
		stalled = append(stalled, d)
	}
	p := owner.get(path)
	if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" ||
		!strings.Contains(p.Body, "already has 2 downloads running") || !strings.Contains(p.Body, fmt.Sprintf(`href="/dashboard/campaigns/%d"`, campaign)) {
		t.Fatalf("third export: %d %v\n%s", p.Status, p.Header, p.Body)
	}

	// Another workspace is not counted with this one: its (empty) campaign downloads whole.
	other := signUp(t, env, "Beta", "owner@beta.example")
	var empty int64
	if err := env.Store.DB().Get(&empty, `INSERT INTO campaigns (account_id, name) VALUES ($1, 'Empty') RETURNING id`,
		accountOf(t, env.Store, "owner@beta.example")); err != nil {
		t.Fatal(err)
	}
	if p := other.get(fmt.Sprintf("/dashboard/campaigns/%d/export.csv", empty)); p.Status != http.StatusOK {
		t.Fatalf("the other workspace's export: %d\n%s", p.Status, p.Body)
	} else {
		checkExport(t, p.Body, 0)
	}

	// The stalled downloads are cut after the stall timeout and free their slots.
	deadline := time.Now().Add(20 * time.Second)
	for {
		p = owner.get(path)
		if p.Status == http.StatusOK {
			checkExport(t, p.Body, messages)
			break
		}
		if p.Status != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("export after the stalled clients' timeout: %d", p.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, d := range stalled {
		body, _ := d.resume()
		if strings.Contains(body, dashboard.ExportTrailer) {
			t.Errorf("stalled download %d got the trailer: it was not cut", i)
		}
	}
}

// Text the workspace does not control (a template's name, the platform's error title) that a
// spreadsheet would run as a formula, also after a leading tab or carriage return, is exported
// as text.
func TestCampaignExportNeutralisesFormulas(t *testing.T) {
	env := exportEnv(t, dashboard.Options{})
	owner := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	campaign := seedLargeCampaign(t, env, acc, 2)
	if _, err := env.Store.DB().Exec(`UPDATE messages SET template_name = E'\t=HYPERLINK("http://evil.example")',
			error_code = 131026, error_title = E'\r@SUM(1+1)' WHERE account_id = $1 AND campaign_id = $2`, acc, campaign); err != nil {
		t.Fatal(err)
	}
	p := owner.get(fmt.Sprintf("/dashboard/campaigns/%d/export.csv", campaign))
	checkExport(t, p.Body, 2)
	rows, _ := csv.NewReader(strings.NewReader(p.Body)).ReadAll()
	for _, row := range rows[1:3] {
		if row[5] != "'\t=HYPERLINK(\"http://evil.example\")" || row[10] != "'\r@SUM(1+1)" {
			t.Errorf("cells not neutralised: %q %q", row[5], row[10])
		}
	}
}
