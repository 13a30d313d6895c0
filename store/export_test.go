package store

import (
	"context"
	"time"
)

// ClaimSQL is the claim statement, for plan tests.
const ClaimSQL = claimSQL

// The single-call forms of the group-committed writes, which the product no longer calls (the
// gateway batches them: server/groupcommit); the store's tests use them to set up and to
// compare against the batches.

// ApplyStatusRecordingWebhook is ApplyStatus for a delivery that carries just this one status,
// storing the raw body in the same statement (ApplyStatusWrites with one write).
func (s *Store) ApplyStatusRecordingWebhook(ctx context.Context, accountID int64, r StatusReport, body []byte) (StatusResult, error) {
	return s.applyWrite(ctx, StatusWrite{AccountID: accountID, Report: r, Body: body})
}

// PrincipalByKeyHash is PrincipalsByKeyHashes for one hash; ErrNotFound for an unknown one.
func (s *Store) PrincipalByKeyHash(ctx context.Context, hash []byte) (Principal, error) {
	ks, err := s.PrincipalsByKeyHashes(ctx, [][]byte{hash})
	if err != nil {
		return Principal{}, err
	}
	if !ks[0].Found {
		return Principal{}, ErrNotFound
	}
	return ks[0].Principal, nil
}

// RecordSent records the platform's acceptance of the account's pending message (recordSentSQL
// with one write); ErrNotFound when the account has no such pending message.
func (s *Store) RecordSent(ctx context.Context, accountID, messageID int64, platformMessageID, waID string, at time.Time) error {
	a, err := s.recordSent(ctx, SentWrite{AccountID: accountID, MessageID: messageID, PlatformMessageID: platformMessageID,
		WaID: waID, At: at})
	if err == nil && !a.Recorded {
		err = ErrNotFound
	}
	return err
}

// MessageByIDReflect is MessageByID read through sqlx's reflection over messageRow's db tags,
// for TestMessageScanMatchesColumns to hold the hand-written scan in step with messageColumns.
func (s *Store) MessageByIDReflect(ctx context.Context, accountID, id int64) (Message, error) {
	var row messageRow
	if err := s.db.GetContext(ctx, &row, messageByIDSQL, accountID, id); err != nil {
		return Message{}, translate(err)
	}
	m := row.message()
	return m, s.withCampaignName(ctx, &m) // not a column: read as MessageByID reads it
}

// FansOutOf is fansOutOf, for the test that it agrees with the fan-out trigger.
func FansOutOf(account string) string { return fansOutOf(account) }

// BenchIndexContactsSQL are the contact-benchmark seeder's statements that fill the contact
// index from the contacts table, for the test that they agree with the trigger.
var BenchIndexContactsSQL = []string{benchCountContactsSQL, benchSuffixContactsSQL}

// SuffixLen is suffixLen, for the test that it agrees with contact_name_suffix_rows.
const SuffixLen = suffixLen

// SetInboxNameSearch sets how many matching contacts the inbox's name search joins to their
// conversations before it walks the view instead, and how many conversations that walk reads
// at most; it returns the function that restores both.
func SetInboxNameSearch(narrow, walk int) (restore func()) {
	oldNarrow, oldWalk := inboxNameNarrow, inboxNameWalk
	inboxNameNarrow, inboxNameWalk = narrow, walk
	return func() { inboxNameNarrow, inboxNameWalk = oldNarrow, oldWalk }
}
