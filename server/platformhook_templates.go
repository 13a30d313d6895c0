package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"gateway/platform/whatsapp"
	"gateway/store"
)

// handleTemplateStatusUpdate sets the status of the template with the platform's id, and its
// rejection reason (the value's reason: kept with REJECTED, cleared by any other status), for
// every account whose number belongs to the WABA (the entry id); an account that does not have
// the template yet syncs its templates instead.
func (s *Server) handleTemplateStatusUpdate(ctx context.Context, d *platformPost, wabaID string, eventTime int64, v whatsapp.ChangeValue) error {
	if v.MessageTemplateID == "" || v.Event == "" {
		s.log.WarnContext(ctx, "platform webhook: template status update without id or event ignored", "waba_id", wabaID)
		return nil
	}
	status := templateStatusOf(v.Event)
	// Applied by event time (entry.time): a late event never undoes a newer one. An event
	// without a time is taken as happening now.
	at := s.now()
	if eventTime > 0 {
		at = time.Unix(eventTime, 0)
	}
	item := map[string]any{"waba_id": wabaID, "value": v}
	ids, err := s.store.AccountIDsByWabaID(ctx, wabaID)
	if err != nil {
		return s.deadLetter(ctx, d, 0, "template_status", item, err)
	}
	if len(ids) == 0 {
		s.log.WarnContext(ctx, "platform webhook: template status update for an unknown WABA ignored", "waba_id", wabaID,
			"template_id", v.MessageTemplateID)
	}
	for _, accountID := range ids {
		err := s.store.UpdateTemplateStatusByPlatformID(ctx, accountID, v.MessageTemplateID, status, v.Reason, at)
		switch {
		case errors.Is(err, store.ErrNotFound):
			s.syncTemplatesAfterWebhook(ctx, accountID, v.MessageTemplateID)
		case err != nil:
			if err := s.deadLetter(ctx, d, accountID, "template_status", item, err); err != nil {
				return err
			}
		}
	}
	return nil
}

// rawOr is an item as received when the parser kept it, else the parsed value.
func rawOr(raw json.RawMessage, parsed any) any {
	if len(raw) > 0 {
		return raw
	}
	return parsed
}

// templateStatusOf maps a template webhook event to the status the template listing would
// show: REINSTATED and UNARCHIVED make the template sendable again (APPROVED); every other
// event (APPROVED, REJECTED, PAUSED, DISABLED, FLAGGED, ...) is the status itself.
func templateStatusOf(event string) string {
	e := strings.ToUpper(strings.TrimSpace(event))
	switch e {
	case "REINSTATED", "UNARCHIVED":
		return "APPROVED"
	}
	return e
}

// syncTemplatesAfterWebhook fetches the account's templates from the platform (SyncTemplates)
// after a webhook named a template the account does not have. Failures are logged: the webhook
// itself was handled, and the periodic sync picks the template up later.
func (s *Server) syncTemplatesAfterWebhook(ctx context.Context, accountID int64, templateID string) {
	ctx, cancel := context.WithTimeout(ctx, templateSyncTimeout)
	defer cancel()
	res, err := s.SyncTemplates(ctx, accountID)
	if err != nil {
		s.log.WarnContext(ctx, "platform webhook: template sync after a status update for an unknown template failed",
			"account_id", accountID, "template_id", templateID, "error", err.Error())
		return
	}
	s.log.InfoContext(ctx, "platform webhook: templates synced after a status update for an unknown template",
		"account_id", accountID, "template_id", templateID, "fetched", res.Fetched)
}
