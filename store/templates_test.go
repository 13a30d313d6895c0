package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"gateway/store"
	"gateway/store/storetest"
)

func newAccount(t testing.TB, st *store.Store, name string) store.Account {
	t.Helper()
	a, err := st.CreateAccount(context.Background(), name, name+"@example.com", fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func tplIn(pid, name, lang, status, cat string, body int) store.TemplateInput {
	return store.TemplateInput{PlatformID: pid, Name: name, Language: lang, Status: status, Category: cat, BodyParams: body,
		Components: json.RawMessage(`[{"type":"BODY","text":"x"}]`)}
}

func TestSyncTemplates(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	b := newAccount(t, st, "beta")

	in := []store.TemplateInput{
		tplIn("300", "c", "en_US", "APPROVED", "utility", 1),
		tplIn("100", "a", "en_US", "APPROVED", "MARKETING", 0),
		tplIn("200", "b", "en_US", "PENDING", "UTILITY", 2),
		tplIn("1000", "d", "pt_BR", "APPROVED", "", 0),
	}
	res, err := st.SyncTemplates(ctx, a.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if res != (store.TemplateSyncCounts{Created: 4}) {
		t.Fatalf("first sync %+v", res)
	}
	ts, err := st.ApprovedTemplates(ctx, a.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: ordered by platform id (numerically), the pending one left out.
	if len(ts) != 3 || ts[0].Name != "d" || ts[1].Name != "c" || ts[2].Name != "a" {
		t.Fatalf("approved %+v", ts)
	}
	if ts[0].CategoryName != "UNKNOWN" || ts[1].CategoryName != "UTILITY" || ts[1].CategoryLabel != "Utility" ||
		ts[2].CategoryID != 1 || ts[1].BodyParams != 1 || ts[0].ParameterFormat != "POSITIONAL" {
		t.Fatalf("fields %+v", ts)
	}
	if ts, _ := st.ApprovedTemplates(ctx, a.ID, 2); len(ts) != 2 {
		t.Fatalf("limit: %d", len(ts))
	}
	// Other accounts see nothing; their own sync is independent.
	if ts, _ := st.ApprovedTemplates(ctx, b.ID, 10); len(ts) != 0 {
		t.Fatalf("B sees %+v", ts)
	}
	if _, err := st.TemplateByID(ctx, b.ID, ts[0].ID); err != store.ErrNotFound {
		t.Fatalf("B reads A's template by id: %v", err)
	}
	if res, err := st.SyncTemplates(ctx, b.ID, in[:1]); err != nil || res.Created != 1 {
		t.Fatalf("B's sync %+v %v", res, err)
	}

	// Same listing: unchanged. A status change: updated. A missing template: DELETED. A
	// re-created one (new platform id, same name and language): same row.
	idOfA := ts[2].ID
	if res, _ := st.SyncTemplates(ctx, a.ID, in); res != (store.TemplateSyncCounts{Unchanged: 4}) {
		t.Fatalf("same listing %+v", res)
	}
	in2 := []store.TemplateInput{
		tplIn("300", "c", "en_US", "PAUSED", "UTILITY", 1),
		tplIn("150", "a", "en_US", "APPROVED", "MARKETING", 0),
		tplIn("200", "b", "en_US", "APPROVED", "UTILITY", 2),
	}
	res, err = st.SyncTemplates(ctx, a.ID, in2)
	if err != nil {
		t.Fatal(err)
	}
	if res != (store.TemplateSyncCounts{Updated: 2, Unchanged: 1, Removed: 1}) {
		t.Fatalf("changed listing %+v", res)
	}
	ts, _ = st.ApprovedTemplates(ctx, a.ID, 10)
	if len(ts) != 2 || ts[0].Name != "b" || ts[1].Name != "a" || ts[1].ID != idOfA || ts[1].PlatformID != "150" {
		t.Fatalf("after changes %+v", ts)
	}
	d, err := st.TemplateByID(ctx, a.ID, ts[0].ID+1)
	if err == nil && d.Name == "d" && d.Status != store.TemplateDeleted {
		t.Fatalf("d not deleted: %+v", d)
	}
	// B's copy of "c" is untouched by A's syncs.
	if bt, _ := st.ApprovedTemplates(ctx, b.ID, 10); len(bt) != 1 || bt[0].Status != "APPROVED" {
		t.Fatalf("B's templates %+v", bt)
	}
}

// TestSendTarget runs with the send-target cache off and on: the answers are the same, since
// every change here goes through the store.
func TestSendTarget(t *testing.T) {
	t.Parallel()
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached=%v", cached), func(t *testing.T) {
			t.Parallel()
			st := storetest.New(t)
			st.CacheSendTargets(cached)
			checkSendTarget(t, st)
		})
	}
}

func checkSendTarget(t *testing.T, st *store.Store) {
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	if _, err := st.SyncTemplates(ctx, a.ID, []store.TemplateInput{
		tplIn("1", "reminder", "en_US", "APPROVED", "UTILITY", 2),
		tplIn("2", "reminder", "es_MX", "APPROVED", "UTILITY", 2),
		tplIn("3", "reminder", "pt_BR", "REJECTED", "UTILITY", 2),
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.SendTarget(ctx, a.ID, 0, "reminder", ""); err != store.ErrNotFound {
		t.Fatalf("send target without a number: %v", err)
	}
	ids, err := st.ConnectedAccountIDs(ctx)
	if err != nil || len(ids) != 0 {
		t.Fatalf("connected accounts %v %v", ids, err)
	}
	if _, err := st.ConnectNumber(ctx, store.Connection{AccountID: a.ID, WabaID: "w", PhoneNumberID: "p", PhoneNumber: "15550000000",
		DisplayName: "A", AccessToken: "t"}); err != nil {
		t.Fatal(err)
	}
	if ids, _ := st.ConnectedAccountIDs(ctx); len(ids) != 1 || ids[0] != a.ID {
		t.Fatalf("connected accounts %v", ids)
	}
	for _, tc := range []struct {
		lang string
		want int
	}{{"", 2}, {"es_MX", 1}, {"pt_BR", 0}, {"fr_FR", 0}} {
		conn, ts, err := st.SendTarget(ctx, a.ID, 0, "reminder", tc.lang)
		if err != nil || len(ts) != tc.want || conn.AccessToken != "t" || conn.PhoneNumberID != "p" {
			t.Fatalf("language %q: %d templates (%v), want %d; %+v", tc.lang, len(ts), err, tc.want, conn)
		}
		if tc.want == 2 && (ts[0].Language != "en_US" || ts[1].Language != "es_MX" || ts[0].BodyParams != 2 || ts[0].CategoryName != "UTILITY") {
			t.Fatalf("templates %+v", ts)
		}
	}
	// By id: whatever the status (the caller checks), only the account's own.
	_, all, _ := st.SendTarget(ctx, a.ID, 0, "reminder", "")
	_, byID, err := st.SendTarget(ctx, a.ID, all[0].ID, "", "")
	if err != nil || len(byID) != 1 || byID[0].ID != all[0].ID {
		t.Fatalf("by id: %+v %v", byID, err)
	}
	var rejected int64
	st.DB().Get(&rejected, `SELECT id FROM templates WHERE account_id = $1 AND language = 'pt_BR'`, a.ID)
	if _, byID, _ := st.SendTarget(ctx, a.ID, rejected, "", ""); len(byID) != 1 || byID[0].Status != "REJECTED" {
		t.Fatalf("rejected by id: %+v", byID)
	}
	b := newAccount(t, st, "beta")
	if _, err := st.ConnectNumber(ctx, store.Connection{AccountID: b.ID, WabaID: "w2", PhoneNumberID: "p2", PhoneNumber: "15550000001",
		DisplayName: "B", AccessToken: "t2"}); err != nil {
		t.Fatal(err)
	}
	if conn, byID, err := st.SendTarget(ctx, b.ID, all[0].ID, "", ""); err != nil || len(byID) != 0 || conn.AccessToken != "t2" {
		t.Fatalf("B by A's id: %+v %+v %v", conn, byID, err)
	}
	if _, ts, _ := st.SendTarget(ctx, b.ID, 0, "reminder", ""); len(ts) != 0 {
		t.Fatalf("B by A's name: %+v", ts)
	}
}

func TestTemplateStatusByPlatformID(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	b, _ := st.CreateAccount(ctx, "globex", "b@example.com", "globex-1")
	for _, acc := range []int64{a.ID, b.ID} {
		if _, err := st.ConnectNumber(ctx, store.Connection{AccountID: acc, WabaID: "waba-1", PhoneNumberID: fmt.Sprint("pn-", acc),
			PhoneNumber: "15550000000", DisplayName: "x", AccessToken: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := st.AccountIDsByWabaID(ctx, "waba-1")
	if err != nil || len(ids) != 2 {
		t.Fatalf("%v %v", ids, err)
	}
	if ids, _ := st.AccountIDsByWabaID(ctx, "waba-2"); len(ids) != 0 {
		t.Fatalf("%v", ids)
	}
	if _, err := st.DB().Exec(`INSERT INTO templates (account_id, platform_id, name, language, status, category_id) VALUES
		($1, '111', 'welcome', 'en_US', 'APPROVED', 1), ($2, '111', 'welcome', 'en_US', 'APPROVED', 1)`, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateTemplateStatusByPlatformID(ctx, a.ID, "111", "PAUSED", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	var statuses []string
	st.DB().Select(&statuses, `SELECT status FROM templates ORDER BY account_id`)
	if fmt.Sprint(statuses) != "[PAUSED APPROVED]" {
		t.Fatalf("%v", statuses)
	}
	if err := st.UpdateTemplateStatusByPlatformID(ctx, a.ID, "222", "PAUSED", "", time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%v", err)
	}
}

// A REJECTED status update stores its reason; an older update (by event time) changes neither
// the status nor the reason; a newer APPROVED clears the reason, and "NONE" is no reason. The
// other account's template with the same platform id is untouched.
func TestTemplateRejectionReasonByEventTime(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a, _ := st.CreateAccount(ctx, "acme", "a@example.com", "acme-1")
	b, _ := st.CreateAccount(ctx, "globex", "b@example.com", "globex-1")
	if _, err := st.DB().Exec(`INSERT INTO templates (account_id, platform_id, name, language, status, category_id) VALUES
		($1, '111', 'welcome', 'en_US', 'PENDING', 1), ($2, '111', 'welcome', 'en_US', 'PENDING', 1)`, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	state := func(acc int64) string {
		t.Helper()
		var s string
		if err := st.DB().Get(&s, `SELECT status || '/' || rejected_reason FROM templates WHERE account_id = $1 AND platform_id = '111'`, acc); err != nil {
			t.Fatal(err)
		}
		return s
	}
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	steps := []struct {
		status, reason string
		at             time.Time
		want           string
	}{
		{"REJECTED", "INVALID_FORMAT", t0, "REJECTED/INVALID_FORMAT"},
		{"APPROVED", "NONE", t0.Add(-time.Minute), "REJECTED/INVALID_FORMAT"}, // late: ignored
		{"APPROVED", "NONE", t0.Add(time.Minute), "APPROVED/"},
		{"REJECTED", "NONE", t0.Add(2 * time.Minute), "REJECTED/"},
		{"REJECTED", " PROMOTIONAL ", t0.Add(3 * time.Minute), "REJECTED/PROMOTIONAL"},
		{"PAUSED", "PROMOTIONAL", t0.Add(4 * time.Minute), "PAUSED/"},
	}
	for i, s := range steps {
		if err := st.UpdateTemplateStatusByPlatformID(ctx, a.ID, "111", s.status, s.reason, s.at); err != nil {
			t.Fatal(err)
		}
		if got := state(a.ID); got != s.want {
			t.Fatalf("step %d (%s %q): %s, want %s", i, s.status, s.reason, got, s.want)
		}
	}
	if got := state(b.ID); got != "PENDING/" {
		t.Fatalf("the other account's template: %s", got)
	}
}

// The sync keeps a rejection reason as the status webhook does: only with REJECTED, and "NONE"
// is no reason.
func TestSyncTemplatesKeepsReasonOnlyWhenRejected(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	a := newAccount(t, st, "acme")
	in := []store.TemplateInput{
		tplIn("1", "rejected", "en_US", "REJECTED", "UTILITY", 0),
		tplIn("2", "rejected_none", "en_US", "REJECTED", "UTILITY", 0),
		tplIn("3", "approved", "en_US", "APPROVED", "UTILITY", 0),
		tplIn("4", "paused", "en_US", "PAUSED", "UTILITY", 0),
	}
	in[0].RejectedReason, in[1].RejectedReason, in[2].RejectedReason, in[3].RejectedReason = " PROMOTIONAL ", "NONE", "NONE", "SCAM"
	if _, err := st.SyncTemplates(ctx, a.ID, in); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"rejected": "PROMOTIONAL", "rejected_none": "", "approved": "", "paused": ""}
	for name, w := range want {
		var got string
		if err := st.DB().Get(&got, `SELECT rejected_reason FROM templates WHERE account_id = $1 AND name = $2`, a.ID, name); err != nil {
			t.Fatal(err)
		}
		if got != w {
			t.Errorf("%s: reason %q, want %q", name, got, w)
		}
	}
}
