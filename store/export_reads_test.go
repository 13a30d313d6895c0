package store

import (
	"context"
	"time"

	"github.com/lib/pq"
)

// Reads that only the store's tests use: the product reads these through other statements
// (the listings, the per-contact window, the zoned campaign series).

// ServiceWindowOf returns the service window of the person with that user id or number (the
// user id first; the number with its other forms, as a mobile or an alias). It returns
// ErrNotFound when the account has no such contact, and fails otherwise only when the database
// does.
func (s *Store) ServiceWindowOf(ctx context.Context, accountID int64, who Identity) (ServiceWindow, error) {
	if who.UserID == "" && who.Mobile == "" {
		return ServiceWindow{}, ErrNotFound
	}
	byUser, byNumber, err := findIdentity(ctx, s.db, accountID, who)
	if err != nil {
		return ServiceWindow{}, err
	}
	c := byUser
	if c == nil {
		c = byNumber
	}
	if c == nil {
		return ServiceWindow{}, ErrNotFound
	}
	return s.ServiceWindowOfContact(ctx, accountID, c.ID)
}

// WebhookEndpointByID returns one endpoint of the account, or ErrNotFound when the account has
// no endpoint with that id.
func (s *Store) WebhookEndpointByID(ctx context.Context, accountID, endpointID int64) (WebhookEndpoint, error) {
	var w WebhookEndpoint
	err := s.db.GetContext(ctx, &w, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints
		WHERE account_id = $1 AND id = $2`, accountID, endpointID)
	return w, translate(err)
}

// CampaignSeries returns the account's campaign's counts per hour or per day (unit "hour" or
// "day", UTC) of the messages recorded in [from, to), oldest first, empty buckets left out. The
// counts are the current statuses of the messages recorded in each bucket. It fails only when
// the database does.
func (s *Store) CampaignSeries(ctx context.Context, accountID, campaignID int64, unit string, from, to time.Time) ([]CampaignBucket, error) {
	return s.CampaignSeriesIn(ctx, accountID, campaignID, unit, "UTC", from, to)
}

// EventsByAccount returns the account's events oldest first (at most limit), optionally of one
// type ("" for all).
func (s *Store) EventsByAccount(ctx context.Context, accountID int64, eventType string, limit int) ([]Event, error) {
	evs := []Event{}
	err := s.db.SelectContext(ctx, &evs, `SELECT `+eventColumns+` FROM events
		WHERE account_id = $1 AND ($2 = '' OR type = $2) ORDER BY created_at, id LIMIT $3`, accountID, eventType, limit)
	return evs, translate(err)
}

// InboxConversations returns the rows of the account's conversations among ids that are in its
// inbox (a conversation the customer never wrote in is left out), latest activity first: the
// rows a poll of the feed names.
func (s *Store) InboxConversations(ctx context.Context, accountID int64, ids []int64) ([]InboxRow, error) {
	rows := []InboxRow{}
	if len(ids) == 0 {
		return rows, nil
	}
	err := s.db.SelectContext(ctx, &rows, inboxRowSQL+` AND v.id = ANY($2) ORDER BY v.last_activity_at DESC, v.id DESC`,
		accountID, pq.Int64Array(ids))
	return rows, translate(err)
}
