package domain

import (
	"context"
	"errors"

	"gateway/store"
)

// Records is what an API key's requests read and keep of an account: its contacts and its
// reports (messages and campaigns). The key's mode selects the implementation once, where the
// key is resolved (server/keymode.go): LiveRecords, the account's data, for a live key;
// TestRecords, fixtures and the test sends, for a test or demo key. The dashboard and the
// operator commands use LiveRecords.
type Records interface {
	// Message is the outbound message with that id as a report shows it: ErrMessageNotFound
	// for another account's, an inbound one, and a send still waiting for the platform's
	// answer. ahead, when not nil, is that message already read (with the key).
	Message(ctx context.Context, accountID, id int64, ahead *store.Message) (store.Message, error)
	// Messages is one page of the account's messages matching f.
	Messages(ctx context.Context, accountID int64, f store.MessageFilter) (store.MessagePage, error)
	// Contacts is one page of the account's contacts as o selects them.
	Contacts(ctx context.Context, accountID int64, o store.ContactListOptions) (store.ContactPage, error)
	// UpsertContact creates the contact or updates the one with the same mobile; created
	// reports which.
	UpsertContact(ctx context.Context, accountID int64, in store.ContactInput) (c store.Contact, created bool, err error)
	// Campaigns is up to limit campaigns with an id below before (all when 0), newest first,
	// with their counts.
	Campaigns(ctx context.Context, accountID, before int64, limit int) ([]store.CampaignReport, error)
	// Campaign is one campaign and its top failure reasons (at most TopFailureReasons);
	// ErrCampaignNotFound for a missing id and another account's alike.
	Campaign(ctx context.Context, accountID, id int64) (store.CampaignReport, []store.FailureReason, error)
}

// Refusals of the reads: each UI turns them into its own not-found answer.
var (
	ErrMessageNotFound  = errors.New("message not found")
	ErrCampaignNotFound = errors.New("campaign not found")
)

// TopFailureReasons is how many failure reasons a campaign report shows.
const TopFailureReasons = 5

// LiveRecords is the account's own data, in the store.
type LiveRecords struct {
	Store *store.Store
}

var _ Records = LiveRecords{}

// Message reads the message (unless ahead holds it). A send still pending is not shown
// unless its outcome is unknown (it is then shown as sent, openapi.yaml's outcome_unknown).
func (l LiveRecords) Message(ctx context.Context, accountID, id int64, ahead *store.Message) (store.Message, error) {
	var m store.Message
	var err error
	if ahead != nil {
		m = *ahead
	} else {
		m, err = l.Store.MessageByID(ctx, accountID, id)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.Status == "pending" && !m.OutcomeUnknown) {
		return store.Message{}, ErrMessageNotFound
	}
	return m, err
}

// Messages lists the account's messages (store.ListMessages).
func (l LiveRecords) Messages(ctx context.Context, accountID int64, f store.MessageFilter) (store.MessagePage, error) {
	return l.Store.ListMessages(ctx, accountID, f)
}

// Campaigns lists the account's campaigns with their counts, read from the counters.
func (l LiveRecords) Campaigns(ctx context.Context, accountID, before int64, limit int) ([]store.CampaignReport, error) {
	return l.Store.Campaigns(ctx, accountID, before, limit)
}

// Campaign is one campaign's report and its top failure reasons.
func (l LiveRecords) Campaign(ctx context.Context, accountID, id int64) (store.CampaignReport, []store.FailureReason, error) {
	c, err := l.Store.CampaignByID(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return c, nil, ErrCampaignNotFound
	}
	if err != nil {
		return c, nil, err
	}
	reasons, err := l.Store.CampaignFailureReasons(ctx, accountID, c.ID, TopFailureReasons)
	return c, reasons, err
}
