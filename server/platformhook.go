package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
)

// The platform's webhooks (Meta → us) at /platform/webhook.
//
// GET answers the subscription handshake. POST is checked against X-Hub-Signature-256 with the
// app secret over the raw body (bad or missing → 401, nothing stored), the raw body is stored,
// and the delivery is processed synchronously — every entry, change, status and message of a
// batch — before answering 200. Processing is idempotent (unique keys), so a retried delivery
// changes nothing. A delivery for an unknown number, a malformed body or an unknown field is
// answered 200 and logged, so Meta does not retry garbage for days.
//
// Each item of a delivery (a status, an inbound message, a template update for one account, a
// sandbox join) is applied on its own. An item that cannot be applied (a value PostgreSQL
// refuses, a timestamp out of range, a failing statement) is kept in platform_dead_letters
// with its error and the rest is applied: one poison item never makes Meta retry, for 7 days,
// a delivery whose other reports would be lost meanwhile. The answer is 500 only when the raw
// delivery, or a dead letter, could not be stored: then nothing durable holds the item, and
// Meta's retry is what we want (applying is idempotent).
//
// A status report is applied by the domain (server/domain/statuses.go), which says how a
// platform status becomes a message's.
//
// Decisions:
//   - STOP / UNSUBSCRIBE / START are matched on the whole trimmed text, case-insensitively, of a
//     text message or of a button or list reply (a template's quick-reply "STOP" opts out too).
//   - A new contact's mobile is the wa_id the platform gave; an existing contact found through
//     another form of the number keeps its mobile and gains the wa_id as an alias.
//   - A template status update for a template the account does not have triggers a template
//     sync for that account, bounded by templateSyncTimeout; its failure is logged.

// platformProcessTimeout bounds the processing of one delivery. Processing does not follow the
// request's context: a platform that hangs up mid-way must not cancel half-applied work (nor
// make database/sql discard pooled connections).
const platformProcessTimeout = 30 * time.Second

// templateSyncTimeout bounds the template sync a webhook for an unknown template triggers.
const templateSyncTimeout = 10 * time.Second

// platformVerify answers the platform's verification handshake: hub.mode=subscribe and the
// configured verify token → 200 with hub.challenge as plain text; anything else → 403.
func (s *Server) platformVerify(c echo.Context) error {
	challenge, ok := whatsapp.VerifyChallenge(c.QueryParams(), s.opts.PlatformVerifyToken)
	if !ok {
		s.log.WarnContext(c.Request().Context(), "platform webhook: verification refused")
		return newAPIError(http.StatusForbidden, gen.ErrorCodeUnauthorized, "Verification token does not match")
	}
	return c.String(http.StatusOK, challenge)
}

// platformWebhook receives the platform's webhook deliveries (see the notes above).
func (s *Server) platformWebhook(c echo.Context) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return s.bodyReadFailed(c.Request(), err) // the body limit's 413, or a slow or broken connection
	}
	sig := c.Request().Header.Get(whatsapp.SignatureHeaderName)
	if !whatsapp.VerifySignature([]byte(s.opts.PlatformAppSecret), body, sig) {
		s.log.WarnContext(c.Request().Context(), "platform webhook: bad signature",
			"signature_present", sig != "", "bytes", len(body))
		return newAPIError(http.StatusUnauthorized, gen.ErrorCodeUnauthorized, "Missing or invalid "+whatsapp.SignatureHeaderName)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), platformProcessTimeout)
	defer cancel()
	p, perr := whatsapp.ParseWebhook(body)
	if perr == nil {
		// The common deliveries, one status or one message of a known number, are stored with
		// what they change, in the statement that applies them.
		done, err := s.applySingleStatus(ctx, p, body)
		if err == nil && !done {
			done, err = s.applySingleInbound(ctx, p, body)
		}
		switch {
		case err != nil:
			// Nothing was written: the raw body is stored below on its own, and the item applied
			// again as an item, dead-lettered if it fails again.
			s.log.WarnContext(ctx, "platform webhook: single item failed; applying it as an item", "error", err.Error())
		case done:
			writeJSON(c, http.StatusOK, gen.Envelope{Success: true, Message: "OK"})
			return nil
		}
	}
	webhookID, err := s.store.RecordPlatformWebhook(ctx, body)
	if err != nil {
		return fmt.Errorf("store platform webhook: %w", err)
	}
	if perr != nil {
		s.log.WarnContext(ctx, "platform webhook: malformed payload ignored", "error", perr.Error())
	} else if err := s.processPlatformWebhook(ctx, p, webhookID); err != nil {
		return fmt.Errorf("process platform webhook: %w", err)
	}
	writeJSON(c, http.StatusOK, gen.Envelope{Success: true, Message: "OK"})
	return nil
}

// applySingleStatus handles a delivery that is exactly one status report for a known,
// non-sandbox number: the raw body and the status change are written by one statement, which
// concurrent deliveries share. It reports false (nothing written) for any other delivery.
func (s *Server) applySingleStatus(ctx context.Context, p *whatsapp.WebhookPayload, body []byte) (bool, error) {
	if len(p.Entry) != 1 || len(p.Entry[0].Changes) != 1 {
		return false, nil
	}
	ch := p.Entry[0].Changes[0]
	v := ch.Value
	pnid := v.Metadata.PhoneNumberID
	if ch.Field != "messages" || len(v.Statuses) != 1 || len(v.Messages) != 0 || len(v.Errors) != 0 ||
		pnid == "" || pnid == s.opts.Sandbox.PhoneNumberID {
		return false, nil
	}
	conn, err := s.tenantByPhoneNumberID(ctx, pnid)
	if err != nil || conn == nil {
		return false, err
	}
	// Concurrent deliveries share the statement (domain.Statuses.ApplyOne).
	return s.statusReports.ApplyOne(ctx, conn.AccountID, platformStatus(v.Statuses[0]), body)
}

// tenantTTL is how long a phone number id → account mapping is reused when nothing tells the
// server of changes. With a TenantListener running, a connected, moved or disconnected number
// drops its entry at once (LISTEN/NOTIFY) and entries live for tenantListenedTTL, a safety net.
const (
	tenantTTL         = 10 * time.Second
	tenantListenedTTL = 10 * time.Minute
)

type tenantEntry struct {
	conn store.Connection
	at   time.Time
}

// tenantByPhoneNumberID returns the connection of the number, nil when no account has it
// connected; known numbers are cached for tenantTTL (unknown ones are not, so a newly
// connected number works at once). It fails only when the database does.
func (s *Server) tenantByPhoneNumberID(ctx context.Context, pnid string) (*store.Connection, error) {
	now := s.now()
	ttl := tenantTTL
	if s.tenantsListened.Load() {
		ttl = tenantListenedTTL
	}
	s.tenantMu.Lock()
	e, ok := s.tenants[pnid]
	gen := s.tenantGen
	s.tenantMu.Unlock()
	if ok && now.Sub(e.at) < ttl {
		return &e.conn, nil
	}
	c, err := s.store.ConnectionByPhoneNumberID(ctx, pnid)
	if errors.Is(err, store.ErrNotFound) {
		s.tenantMu.Lock()
		delete(s.tenants, pnid)
		s.tenantMu.Unlock()
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.tenantMu.Lock()
	if s.tenants == nil || len(s.tenants) > 10000 {
		s.tenants = map[string]tenantEntry{}
	}
	// A change announced while this read ran may predate it: do not cache what may be stale.
	if s.tenantGen == gen {
		s.tenants[pnid] = tenantEntry{conn: c, at: now}
	}
	s.tenantMu.Unlock()
	return &c, nil
}

// forgetTenant drops the cached mapping of a phone number id ("" drops them all).
func (s *Server) forgetTenant(pnid string) {
	s.tenantMu.Lock()
	s.tenantGen++
	if pnid == "" {
		s.tenants = nil
	} else {
		delete(s.tenants, pnid)
	}
	s.tenantMu.Unlock()
}

// platformPost is one verified POST of the platform's inbound webhook being applied.
type platformPost struct {
	id      int64                        // its raw body's row in platform_webhooks
	tenants map[string]*store.Connection // by phone number id
}

// processPlatformWebhook applies one verified delivery, item by item. It returns an error only
// when an item failed and its dead letter could not be stored; everything else is applied,
// dead-lettered, or logged and skipped.
func (s *Server) processPlatformWebhook(ctx context.Context, p *whatsapp.WebhookPayload, webhookID int64) error {
	d := &platformPost{id: webhookID, tenants: map[string]*store.Connection{}}
	for _, e := range p.Entry {
		for _, ch := range e.Changes {
			var err error
			switch ch.Field {
			case "messages":
				err = s.handleMessagesChange(ctx, d, ch.Value)
			case "message_template_status_update":
				err = s.handleTemplateStatusUpdate(ctx, d, e.ID, e.Time, ch.Value)
			case "phone_number_quality_update":
				err = s.handleQualityUpdate(ctx, e.ID)
			default:
				s.log.DebugContext(ctx, "platform webhook: field ignored", "field", ch.Field, "waba_id", e.ID)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// isolate applies one item of a delivery; when apply fails the item is kept as a dead letter
// (see deadLetter) and the delivery goes on.
func (s *Server) isolate(ctx context.Context, d *platformPost, accountID int64, kind string, item any, apply func() error) error {
	if err := apply(); err != nil {
		return s.deadLetter(ctx, d, accountID, kind, item, err)
	}
	return nil
}

// deadLetter keeps an item that could not be applied, with its error, in
// platform_dead_letters (accountID 0: tenant unknown). It fails only when that insert fails.
func (s *Server) deadLetter(ctx context.Context, d *platformPost, accountID int64, kind string, item any, cause error) error {
	raw, err := json.Marshal(item)
	if err != nil {
		raw = []byte(fmt.Sprintf("%q", fmt.Sprintf("%+v", item)))
	}
	dl := store.DeadLetter{WebhookID: &d.id, Kind: kind, Item: raw, Error: cause.Error()}
	if accountID != 0 {
		dl.AccountID = &accountID
	}
	id, err := s.store.RecordDeadLetter(ctx, dl)
	if err != nil {
		return fmt.Errorf("%s item failed (%v) and its dead letter could not be stored: %w", kind, cause, err)
	}
	s.log.WarnContext(ctx, "platform webhook: item dead-lettered", "dead_letter_id", id, "webhook_id", d.id,
		"account_id", accountID, "kind", kind, "error", cause.Error())
	return nil
}

// handleMessagesChange applies the statuses and inbound messages of a "messages" change.
func (s *Server) handleMessagesChange(ctx context.Context, d *platformPost, v whatsapp.ChangeValue) error {
	pnid := v.Metadata.PhoneNumberID
	for _, e := range v.Errors {
		s.log.WarnContext(ctx, "platform webhook: system error", "phone_number_id", pnid, "code", e.Code, "title", e.Title,
			"details", e.ErrorData.Details)
	}
	if pnid == "" {
		s.log.WarnContext(ctx, "platform webhook: change without metadata.phone_number_id ignored")
		return nil
	}
	if s.opts.Sandbox.PhoneNumberID != "" && pnid == s.opts.Sandbox.PhoneNumberID {
		return s.handleSandboxChange(ctx, d, v)
	}
	conn, ok := d.tenants[pnid]
	if !ok {
		var err error
		if conn, err = s.tenantByPhoneNumberID(ctx, pnid); err != nil {
			return s.deadLetter(ctx, d, 0, "change", v, err)
		}
		d.tenants[pnid] = conn
	}
	if conn == nil {
		s.log.WarnContext(ctx, "platform webhook: unknown phone number id; ignored", "phone_number_id", pnid,
			"statuses", len(v.Statuses), "messages", len(v.Messages))
		return nil
	}
	for _, st := range v.Statuses {
		err := s.isolate(ctx, d, conn.AccountID, "status", rawOr(st.Raw, st), func() error {
			return s.applyPlatformStatus(ctx, conn.AccountID, st)
		})
		if err != nil {
			return err
		}
	}
	for _, m := range v.Messages {
		if err := s.recordInbound(ctx, d, conn.AccountID, conn.PhoneNumber, m); err != nil {
			return err
		}
	}
	return nil
}

// applyPlatformStatus applies one status report of a delivery (domain.Statuses.Apply).
func (s *Server) applyPlatformStatus(ctx context.Context, accountID int64, st whatsapp.Status) error {
	return s.statusReports.Apply(ctx, accountID, platformStatus(st))
}

// platformStatus is a status of the platform's webhook as the domain applies it.
func platformStatus(st whatsapp.Status) domain.PlatformStatus {
	out := domain.PlatformStatus{ID: st.ID, Status: st.Status, CallbackData: st.BizOpaqueCallbackData}
	if at, ok := st.Time(); ok {
		out.At = at
	}
	if len(st.Errors) > 0 {
		e := st.Errors[0]
		out.Error = &domain.StatusError{Code: e.Code, Title: e.Title, Message: e.Message, Details: e.ErrorData.Details}
	}
	if p := st.Pricing; p != nil {
		out.Pricing = &store.Pricing{Type: p.Type, Category: p.Category, Model: p.PricingModel}
	}
	return out
}

// handleSandboxChange handles traffic on the shared sandbox number: joins, replies and test
// events (see sandbox_inbound.go). Statuses of the sandbox's own sends are ignored.
func (s *Server) handleSandboxChange(ctx context.Context, d *platformPost, v whatsapp.ChangeValue) error {
	return s.handleSandboxMessages(ctx, d, v)
}
