package domain

import (
	"context"
	"errors"
	"fmt"

	"gateway/store"
)

// TemplateSource lists a WhatsApp Business Account's templates, every status, as the store
// keeps them. The API adapts the platform's client to it.
type TemplateSource interface {
	ListTemplates(ctx context.Context, token, wabaID string) ([]store.TemplateInput, error)
}

// SyncResult is what one template sync of an account did.
type SyncResult struct {
	AccountID int64 `json:"account_id"`
	// Fetched is how many templates the platform listed (every status); Approved how many of
	// them are approved (and listed by GET /templates).
	Fetched  int `json:"fetched"`
	Approved int `json:"approved"`
	store.TemplateSyncCounts
}

// TemplateSync keeps an account's templates in step with the platform's.
type TemplateSync struct {
	Store *store.Store
	// Source lists the templates; nil: no platform is configured and every sync fails.
	Source TemplateSource
}

// Sync pulls every template of the account's WhatsApp Business Account from the platform and
// stores them all (see store.SyncTemplates). It fails with an error wrapping store.ErrNotFound
// when the account has no number connected, with the source's error (the platform client's
// whatsapp.Error, ErrUnavailable, ...) when the listing fails, and when the database fails;
// then nothing is changed.
func (t TemplateSync) Sync(ctx context.Context, accountID int64) (SyncResult, error) {
	res := SyncResult{AccountID: accountID}
	conn, err := t.Store.ConnectionByAccount(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return res, fmt.Errorf("account %d has no connected number: %w", accountID, err)
	}
	if err != nil {
		return res, err
	}
	if t.Source == nil {
		return res, errors.New("no messaging platform configured")
	}
	in, err := t.Source.ListTemplates(ctx, conn.AccessToken, conn.WabaID)
	if err != nil {
		return res, fmt.Errorf("list templates of WABA %s: %w", conn.WabaID, err)
	}
	for _, ti := range in {
		if ti.Status == store.TemplateApproved {
			res.Approved++
		}
	}
	res.Fetched = len(in)
	counts, err := t.Store.SyncTemplates(ctx, accountID, in)
	if err != nil {
		return res, err
	}
	res.TemplateSyncCounts = counts
	return res, nil
}
