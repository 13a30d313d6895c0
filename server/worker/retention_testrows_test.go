package worker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gateway/store"
)

// Retention also prunes what test and demo keys leave behind (test_messages) and the platform
// webhook dead letters, on the same horizon as the raw deliveries they point to. Sandbox
// participants stay: their real-delivery count is a lifetime cap per handset.
func TestRetentionPrunesTestRowsAndDeadLetters(t *testing.T) {
	e := newWHEnv(t)
	ctx := context.Background()
	db := e.st.DB()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	acct := e.account("acme")
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	for i, age := range []time.Duration{31 * day, 40 * day, 29 * day} {
		exec(`INSERT INTO test_messages (account_id, destination, template_name, delivery, platform_message_id, created_at)
			VALUES ($1, '15551234567', 't', 'simulated', $2, $3)`, acct.ID, "wamid.T"+string(rune('a'+i)), now.Add(-age))
	}
	exec(`INSERT INTO sandbox_participants (account_id, phone, joined_at) VALUES ($1, '15550000001', $2), ($1, '15550000002', $3)`,
		acct.ID, now.Add(-31*day), now.Add(-2*day))
	exec(`INSERT INTO platform_dead_letters (kind, item, error, created_at) VALUES ('status', '\x7b7d', 'x', $1), ('status', '\x7b7d', 'y', $2)`,
		now.Add(-31*day), now.Add(-day))

	// The dashboard's sessions: one idle for 13 h, one signed in 31 days ago and still in use,
	// one in use: only the last stays.
	_, u, err := e.st.SignUp(ctx, "Sessions Ltd", "s@example.com", "hash", "SESSJOIN")
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range [][2]time.Time{{now.Add(-14 * time.Hour), now.Add(-13 * time.Hour)},
		{now.Add(-31 * day), now.Add(-time.Minute)}, {now.Add(-2 * day), now.Add(-time.Hour)}} {
		exec(`INSERT INTO sessions (id_hash, account_id, user_id, created_at, last_seen_at)
			SELECT decode(repeat($1, 32), 'hex'), account_id, user_id, $2, $3 FROM memberships WHERE user_id = $4`,
			fmt.Sprintf("%02x", i+1), at[0], at[1], u.ID)
	}

	r := NewRetention(e.st, RetentionConfig{BatchSize: 2, Clock: func() time.Time { return now }, Logger: testLogger(t)})
	n, err := r.runOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Sessions != 2 {
		t.Fatalf("deleted %d expired sessions, want 2", n.Sessions)
	}
	if n.TestMessages != 2 || n.DeadLetters != 1 {
		t.Fatalf("deleted %+v", n)
	}
	count := func(q string) int {
		var c int
		if err := db.GetContext(ctx, &c, q); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if count(`SELECT count(*) FROM test_messages`) != 1 || count(`SELECT count(*) FROM sandbox_participants`) != 2 ||
		count(`SELECT count(*) FROM platform_dead_letters WHERE error = 'y'`) != 1 {
		t.Fatal("a row within the horizon was deleted")
	}
}

// Retention deletes the record of an upload once the platform no longer keeps the file
// (MediaUploadKeep after the upload), whatever Keep says; GET /v1/media/{media_id} then finds
// no such media for the account.
func TestRetentionPrunesMediaUploads(t *testing.T) {
	e := newWHEnv(t)
	ctx := context.Background()
	db := e.st.DB()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	acct := e.account("acme")
	other := e.account("other")
	uploads := []struct {
		accountID int64
		id        string
		age       time.Duration
		kept      bool
	}{
		{acct.ID, "m-31d", 31 * day, false},
		{acct.ID, "m-40d", 40 * day, false},
		{other.ID, "m-other-35d", 35 * day, false},
		{acct.ID, "m-29d", 29 * day, true},
		{other.ID, "m-other-1d", day, true},
	}
	for _, u := range uploads {
		if _, err := db.ExecContext(ctx, `INSERT INTO media_uploads (account_id, media_id, kind, mime_type, file_size, sha256, created_at)
			VALUES ($1, $2, 'image', 'image/jpeg', 10, 'ab', $3)`, u.accountID, u.id, now.Add(-u.age)); err != nil {
			t.Fatal(err)
		}
	}
	// A Keep longer than the uploads' horizon does not keep them.
	r := NewRetention(e.st, RetentionConfig{Keep: 90 * day, BatchSize: 2, Clock: func() time.Time { return now }, Logger: testLogger(t)})
	n, err := r.runOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.MediaUploads != 3 {
		t.Fatalf("deleted %+v, want 3 media uploads", n)
	}
	for _, u := range uploads {
		_, err := e.st.MediaByID(ctx, u.accountID, u.id)
		switch {
		case u.kept && err != nil:
			t.Errorf("%s: %v, want it kept", u.id, err)
		case !u.kept && !errors.Is(err, store.ErrNotFound):
			t.Errorf("%s: %v, want it gone", u.id, err)
		}
	}
	if n, err := r.runOnce(ctx); err != nil || n.MediaUploads != 0 {
		t.Fatalf("second run: %+v %v", n, err)
	}
}
