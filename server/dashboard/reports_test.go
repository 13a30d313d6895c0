package dashboard_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server/dashboard"
	"gateway/server/domain"
	"gateway/server/servertest"
	"gateway/store"
)

// reportsEnv is the gateway with the dashboard over a quiet simulator (statuses only when a
// test posts them).
func reportsEnv(t *testing.T) *servertest.Env {
	t.Helper()
	c := &testConnector{}
	env := servertest.New(t, servertest.Config{
		Dashboard: dashboard.Options{Development: true, SignupOpen: true, WebhookAllowPrivate: true},
		Connector: c,
		Simulator: &simulator.Config{SentDelay: time.Hour, DeliveredDelay: time.Hour, ReadDelay: time.Hour},
	})
	c.st = env.Store
	return env
}

// seeded is what seedReports wrote for a workspace.
type seeded struct {
	contact, inbound, campaign, failed, read, attempt int64
	ids                                               []int64 // the campaign's messages, oldest first
	statuses                                          []string
}

// seedReports writes a contact with a conversation, a campaign with five messages in every
// status over two hours (one failed with the platform's error), the customer's reply through the
// inbound path, and a logged webhook attempt of the read message's message.sent event.
func seedReports(t *testing.T, env *servertest.Env, accountID int64) seeded {
	t.Helper()
	db := env.Store.DB()
	var s seeded
	var conv, endpoint int64
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.Get(&s.contact, `INSERT INTO contacts (account_id, mobile, name) VALUES ($1, '5511987654321', 'Ana Souza') RETURNING id`, accountID))
	must(db.Get(&conv, `INSERT INTO conversations (account_id, contact_id) VALUES ($1, $2) RETURNING id`, accountID, s.contact))
	must(db.Get(&s.campaign, `INSERT INTO campaigns (account_id, name) VALUES ($1, 'Spring sale') RETURNING id`, accountID))
	base := time.Date(2026, 11, 20, 9, 10, 0, 0, time.UTC)
	for i, st := range []string{"sent", "delivered", "read", "failed", "read"} {
		var id int64
		var code *int
		if st == "failed" {
			c := 131026
			code = &c
		}
		must(db.Get(&id, `INSERT INTO messages (account_id, contact_id, conversation_id, campaign_id, direction, type, destination,
				template_name, content, platform_message_id, status, error_code, error_title, error_details, created_at, sent_at)
			VALUES ($1, $2, $3, $4, 'out', 'template', '5511987654321', 'order_confirmation',
				'{"language": "en_US", "body_variables": ["Ana", "ORD-7781"]}', 'wamid.dash-' || gen_random_uuid(), $5, $6,
				CASE WHEN $6::int IS NULL THEN NULL ELSE 'Message undeliverable' END,
				CASE WHEN $6::int IS NULL THEN NULL ELSE 'The number is not on WhatsApp' END, $7, $7) RETURNING id`,
			accountID, s.contact, conv, s.campaign, st, code, base.Add(time.Duration(i)*25*time.Minute)))
		// The reported status's time (the history), in its column.
		_, err := db.Exec(`UPDATE messages SET delivered_at = CASE WHEN $3 = 'delivered' THEN $4::timestamptz END,
				read_at = CASE WHEN $3 = 'read' THEN $4::timestamptz END, failed_at = CASE WHEN $3 = 'failed' THEN $4::timestamptz END
			WHERE account_id = $1 AND id = $2`,
			accountID, id, st, base.Add(time.Duration(i)*25*time.Minute+time.Second))
		must(err)
		s.ids, s.statuses = append(s.ids, id), append(s.statuses, st)
		switch st {
		case "failed":
			s.failed = id
		case "read":
			s.read = id
		}
	}
	// The customer's reply goes through the inbound path, as the platform's webhook does, so the
	// pages agree on it: the inbox lists the conversation and the service window is open.
	in, err := env.Store.RecordInbound(context.Background(), accountID, store.InboundMessage{PlatformMessageID: "wamid.in.dash-reply",
		From: "5511987654321", ProfileName: "Ana Souza", Type: "text", SentAt: time.Now(), Content: json.RawMessage(`{"text":{"body":"Is it in blue?"}}`)})
	must(err)
	if in.ConversationID != conv || in.ContactID != s.contact {
		t.Fatalf("the reply went to conversation %d of contact %d, not %d of %d", in.ConversationID, in.ContactID, conv, s.contact)
	}
	s.inbound = in.MessageID
	must(db.Get(&endpoint, `INSERT INTO webhook_endpoints (account_id, url, secret) VALUES ($1, 'http://127.0.0.1:9/hook', '\x00') RETURNING id`, accountID))
	var event, delivery string
	must(db.Get(&event, `INSERT INTO events (account_id, type, data, created_at) VALUES ($1, 'message.sent', jsonb_build_object('message_id', $2::bigint), now())
		RETURNING id`, accountID, s.read))
	must(db.Get(&delivery, `SELECT id FROM webhook_deliveries WHERE account_id = $1 AND event_id = $2`, accountID, event))
	must(db.Get(&s.attempt, `INSERT INTO webhook_attempts (account_id, delivery_id, attempt, attempted_at, status_code, latency_ms)
		VALUES ($1, $2, 1, now(), 200, 12) RETURNING id`, accountID, delivery))
	return s
}

// The campaign, message and contact pages show what the database holds: counts from the
// counters, the chart, failure reasons, the CSV export row by row, the message list's filters,
// a message's history, error, variables and webhook attempts, a contact's messages both ways.
func TestReportPages(t *testing.T) {
	env := reportsEnv(t)
	a := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	s := seedReports(t, env, acc)

	p := a.get("/dashboard/campaigns")
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "Spring sale") || !strings.Contains(p.Body, fmt.Sprintf("/dashboard/campaigns/%d", s.campaign)) {
		t.Fatalf("campaigns: %d\n%s", p.Status, p.Body)
	}
	p = a.get(fmt.Sprintf("/dashboard/campaigns/%d", s.campaign))
	for _, want := range []string{`<dd id="count-total">5</dd>`, `<dd id="count-read">2</dd>`, `<dd id="count-failed">1</dd>`,
		`<dd id="count-sent">4</dd>`, `<dd id="count-delivered">3</dd>`, `<dd id="delivery-rate">60.0 %</dd>`, `<dd id="read-rate">40.0 %</dd>`,
		`<svg id="campaign-chart"`, `Message undeliverable`, `<td data-label="Hour">11-20 09h</td><td data-label="Sent">2</td><td data-label="Delivered">1</td><td data-label="Read">0</td><td data-label="Failed">0</td>`, `<td data-label="Hour">11-20 10h</td><td data-label="Sent">2</td><td data-label="Delivered">2</td><td data-label="Read">2</td><td data-label="Failed">1</td>`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("campaign report lacks %s", want)
		}
	}
	if n := strings.Count(p.Body, "<rect "); n != 8 {
		t.Errorf("chart has %d bars, want 8 (two hours of four series)", n)
	}

	// CSV.
	p = a.get(fmt.Sprintf("/dashboard/campaigns/%d/export.csv", s.campaign))
	if p.Status != http.StatusOK || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(p.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("csv: %d %v", p.Status, p.Header)
	}
	rows, err := csv.NewReader(strings.NewReader(p.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2+len(s.ids) || rows[0][0] != "message_id" || rows[0][6] != "status" {
		t.Fatalf("csv rows %v", rows)
	}
	if end := rows[len(rows)-1]; end[0] != dashboard.ExportTrailer || end[1] != strconv.Itoa(len(s.ids)) {
		t.Errorf("csv trailer %q", end)
	}
	for i, row := range rows[1 : len(rows)-1] {
		if row[0] != strconv.FormatInt(s.ids[i], 10) || row[6] != s.statuses[i] || row[3] != "5511987654321" {
			t.Errorf("csv row %d: %v, want message %d %s", i, row, s.ids[i], s.statuses[i])
		}
		if row[6] == "failed" && (row[9] != "131026" || row[10] != "Message undeliverable") {
			t.Errorf("csv failed row %v", row)
		}
	}

	// The messages list and its filters.
	listed := func(q string) []int64 {
		t.Helper()
		p := a.get("/dashboard/messages?" + q)
		if p.Status != http.StatusOK {
			t.Fatalf("messages?%s: %d", q, p.Status)
		}
		var ids []int64
		for _, part := range strings.Split(p.Body, `data-message="`)[1:] {
			id, _ := strconv.ParseInt(part[:strings.Index(part, `"`)], 10, 64)
			ids = append(ids, id)
		}
		return ids
	}
	rev := slices.Clone(s.ids)
	slices.Reverse(rev)
	// The customer's reply (recorded now, so the newest) is listed with the sent messages.
	withReply := append([]int64{s.inbound}, rev...)
	for q, want := range map[string][]int64{
		"":                                     withReply,
		"direction=out":                        rev,
		"direction=in":                         {s.inbound},
		"status=failed":                        {s.failed},
		"status=read":                          {s.ids[4], s.ids[2]},
		fmt.Sprintf("campaign=%d", s.campaign): rev,
		"campaign=999999":                      nil,
		"template=order_confirmation":          rev,
		"template=other":                       nil,
		fmt.Sprintf("contact=%d", s.contact):   withReply,
		"q=souza":                              withReply,
		"q=%2B55+11+98765-4321":                withReply,
		"q=nobody":                             nil,
		"template=CONFIRM":                     rev,
		"from=2026-11-21":                      {s.inbound},
		"from=2026-11-21&direction=out":        nil,
		"from=2026-11-20&to=2026-11-20":        rev,
	} {
		if got := listed(q); !slices.Equal(got, want) {
			t.Errorf("messages?%s: %v, want %v", q, got, want)
		}
	}

	// A failed message's page: error, history, variables; a read one's webhook attempt.
	p = a.get(fmt.Sprintf("/dashboard/messages/%d", s.failed))
	for _, want := range []string{"131026", "Message undeliverable", "The number is not on WhatsApp", `id="history"`, "ORD-7781"} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("failed message page lacks %q", want)
		}
	}
	p = a.get(fmt.Sprintf("/dashboard/messages/%d", s.read))
	if !strings.Contains(p.Body, fmt.Sprintf(`href="/dashboard/request-log/%d"`, s.attempt)) || !strings.Contains(p.Body, "message.sent") {
		t.Errorf("read message page lacks its attempt %d:\n%s", s.attempt, p.Body)
	}
	if p := a.get(fmt.Sprintf("/dashboard/request-log/%d", s.attempt)); p.Status != http.StatusOK {
		t.Errorf("the attempt's request log page: %d", p.Status)
	}

	// The contact: list, search, page with both directions.
	if p := a.get("/dashboard/contacts?search=souza"); !strings.Contains(p.Body, fmt.Sprintf("/dashboard/contacts/%d", s.contact)) {
		t.Errorf("contact search misses Ana")
	}
	if p := a.get("/dashboard/contacts?search=nobody"); strings.Contains(p.Body, "/dashboard/contacts/") && strings.Contains(p.Body, "Ana Souza") {
		t.Errorf("contact search for nobody lists Ana")
	}
	p = a.get(fmt.Sprintf("/dashboard/contacts/%d", s.contact))
	// Every message links to its page, the received one too.
	if !strings.Contains(p.Body, "Received") || strings.Count(p.Body, "/dashboard/messages/") != len(s.ids)+1 {
		t.Errorf("contact page messages:\n%s", p.Body)
	}
}

// Editing a contact, blocking and unblocking it are recorded in the audit log; a blocked
// contact's next API send answers 409, and after unblocking it goes out.
func TestContactEditBlockUnblock(t *testing.T) {
	env := reportsEnv(t)
	a := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	tn := servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}}
	env.ConnectNumber(tn)
	if _, err := env.Server.SyncTemplates(context.Background(), acc); err != nil {
		t.Fatal(err)
	}
	key, _ := env.NewKey(acc, domain.ModeLive)
	send := func() *servertest.Response {
		return env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/messages/template", Key: key,
			Body: map[string]any{"destination": "5511987654321", "template_name": "order_confirmation", "body_variables": []string{"Ana", "ORD-1"}}})
	}
	if r := send(); r.Status != http.StatusOK {
		t.Fatalf("first send: %d %s", r.Status, r.Body)
	}
	var id int64
	if err := env.Store.DB().Get(&id, `SELECT id FROM contacts WHERE account_id = $1`, acc); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/dashboard/contacts/%d", id)

	if p := a.post(path, url.Values{"name": {"Ana Maria Souza"}, "note": {"Prefers mornings"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("edit: %d %s", p.Status, p.Body)
	}
	c, err := env.Store.ContactByID(context.Background(), acc, id)
	if err != nil || c.Name != "Ana Maria Souza" || c.Note != "Prefers mornings" {
		t.Fatalf("after edit: %+v %v", c, err)
	}
	if p := a.post(path+"/block", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("block: %d", p.Status)
	}
	if p := a.get(path + "?notice=contact-blocked"); !strings.Contains(p.Body, `id="unblock"`) || !strings.Contains(p.Body, "sends to it are refused") {
		t.Fatalf("blocked contact page:\n%s", p.Body)
	}
	if r := send(); r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "contact_blocked") {
		t.Fatalf("send to a blocked contact: %d %s", r.Status, r.Body)
	}
	if p := a.post(path+"/unblock", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("unblock: %d", p.Status)
	}
	if r := send(); r.Status != http.StatusOK {
		t.Fatalf("send after unblocking: %d %s", r.Status, r.Body)
	}
	es, err := env.Store.AuditLog(context.Background(), acc, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range es {
		if strings.HasPrefix(e.Action, "contact.") {
			actions = append(actions, e.Action+" "+e.Target+" "+e.UserEmail)
		}
	}
	want := []string{"contact.unblocked 5511987654321 owner@acme.example", "contact.blocked 5511987654321 owner@acme.example",
		"contact.updated 5511987654321 owner@acme.example"}
	if !slices.Equal(actions, want) {
		t.Fatalf("audit %v, want %v", actions, want)
	}
}

// Another workspace's campaign, message and contact ids are 404 on every page and action,
// and nothing of A's changes.
func TestReportPagesOtherWorkspace(t *testing.T) {
	env := reportsEnv(t)
	signUp(t, env, "Acme", "owner@acme.example")
	b := signUp(t, env, "Beta", "owner@beta.example")
	s := seedReports(t, env, accountOf(t, env.Store, "owner@acme.example"))
	for _, path := range []string{fmt.Sprintf("/dashboard/campaigns/%d", s.campaign), fmt.Sprintf("/dashboard/campaigns/%d/export.csv", s.campaign),
		fmt.Sprintf("/dashboard/messages/%d", s.failed), fmt.Sprintf("/dashboard/contacts/%d", s.contact)} {
		if p := b.get(path); p.Status != http.StatusNotFound {
			t.Errorf("B GET %s = %d, want 404", path, p.Status)
		}
	}
	for _, path := range []string{fmt.Sprintf("/dashboard/contacts/%d", s.contact), fmt.Sprintf("/dashboard/contacts/%d/block", s.contact)} {
		if p := b.post(path, url.Values{"name": {"Mallory"}}); p.Status != http.StatusNotFound {
			t.Errorf("B POST %s = %d, want 404", path, p.Status)
		}
	}
	if p := b.get(fmt.Sprintf("/dashboard/messages?campaign=%d", s.campaign)); strings.Contains(p.Body, "data-message=") {
		t.Errorf("B lists A's messages by campaign id")
	}
	if p := b.get("/dashboard/campaigns"); strings.Contains(p.Body, "Spring sale") {
		t.Errorf("B lists A's campaign")
	}
	c, err := env.Store.ContactByID(context.Background(), accountOf(t, env.Store, "owner@acme.example"), s.contact)
	if err != nil || c.Name != "Ana Souza" || c.Blocked {
		t.Fatalf("A's contact changed: %+v %v", c, err)
	}
}
