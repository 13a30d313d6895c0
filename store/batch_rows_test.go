package store_test

import (
	"bytes"
	"context"
	"testing"

	"gateway/store"
)

// A batch's raw webhook bodies are stored byte for byte, whatever bytes they hold (the rows
// travel as JSON, a body as base64), and a write without a body stores none; the error of a
// failed report keeps its null details apart from its empty title.
func TestApplyStatusWritesKeepBodiesByteExact(t *testing.T) {
	t.Parallel()
	f := newInboundFixture(t)
	ctx := context.Background()
	for _, pid := range []string{"wamid.B1", "wamid.B2", "wamid.B3"} {
		f.recordPlatformID(t, f.message(t, "pending", ""), pid)
	}
	binary := []byte("{\"a\":\"\x00\xff\xfe\\\"'\u00e9\"}\n\r\t")
	code := 131026
	failed := report("wamid.B3", "failed", 4)
	failed.ErrorCode = &code
	ws := []store.StatusWrite{
		{AccountID: f.accountID, Report: report("wamid.B1", "delivered", 2), Body: binary},
		{AccountID: f.accountID, Report: report("wamid.B2", "delivered", 2)},
		{AccountID: f.accountID, Report: failed, Body: []byte{}},
	}
	out, err := f.st.ApplyStatusWrites(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range out {
		if !a.Found || !a.Changed || a.I != i+1 {
			t.Errorf("write %d: %+v", i, a)
		}
	}
	var bodies [][]byte
	if err := f.st.DB().Select(&bodies, `SELECT body FROM platform_webhooks ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 1 || !bytes.Equal(bodies[0], binary) {
		t.Errorf("stored bodies %q, want only %q", bodies, binary)
	}
	var e struct {
		Code    *int    `db:"error_code"`
		Title   *string `db:"error_title"`
		Details *string `db:"error_details"`
	}
	if err := f.st.DB().Get(&e, `SELECT error_code, error_title, error_details FROM messages
		WHERE account_id = $1 AND platform_message_id = 'wamid.B3'`, f.accountID); err != nil {
		t.Fatal(err)
	}
	if e.Code == nil || *e.Code != code || e.Title == nil || *e.Title != "" || e.Details != nil {
		t.Errorf("error %v %v %v, want code %d, title \"\" and no details", e.Code, e.Title, e.Details, code)
	}
}
