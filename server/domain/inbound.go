package domain

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gateway/store"
)

// Recording what customers send to an account's number: every message kind, edits and
// deletions, and the platform's notices that a person changed number or user id.
//
// Decisions:
//   - A message is recorded against the person (store.RecordInbound: by user id, number or
//     both, linking and merging as the identity rules say) and fires message.received, or
//     message.received_without_number when neither the message nor the contact has a number,
//     so that a v1 receiver never gets a message.received without `from`.
//   - STOP / UNSUBSCRIBE / START are matched on the whole trimmed text, case-insensitively, of
//     a text message or of a button or list reply (a template's quick-reply "STOP" opts out
//     too); the block follows the person and is audited.
//   - user_changed_number moves the contact to the new number (and to the new user id the
//     platform gives with it); user_changed_user_id relinks the id. Neither is a message: each
//     fires contact.updated, with the identifiers before and after.
//   - An edit or a deletion of a message the account does not have, and an identity change of
//     a person it does not know, cannot be applied: they come back as errors wrapping
//     ErrInboundNotApplicable, which the caller keeps as dead letters.

// ErrInboundNotApplicable is wrapped by Inbound.Record's error for an item that names
// something the account does not have (the message edited or deleted, the person whose
// identity changed), or that lacks what it needs to be applied.
var ErrInboundNotApplicable = errors.New("inbound item not applicable")

// InboundSender is who sent a message: a number (WaID), a business-scoped user id, or both.
type InboundSender struct {
	WaID         string
	UserID       string
	ParentUserID string
	Username     string
	Name         string // the profile name
}

// InboundMessage is one item the platform's messages webhook carries: a message of any kind,
// an edit (Edit set), a deletion (RevokedID set), or an identity notice (a system message).
type InboundMessage struct {
	PlatformMessageID string
	Sender            InboundSender
	Type              string    // the platform's type
	SentAt            time.Time // zero: now
	Raw               json.RawMessage
	Content           InboundContent
	// ReplyTo is the platform id of the message this one quotes, "" for none.
	ReplyTo             string
	Forwarded           bool
	FrequentlyForwarded bool
	Referral            *Referral
	ReferredProduct     *ReferredProduct
	// Window is how long the service window stays open after the message (72 h after an ad,
	// else 24 h); zero is 24 h.
	Window time.Duration
	// Edit is the new content of an edited message; RevokedID the platform id of a deleted one.
	Edit      *InboundEdit
	RevokedID string
	// Body is the raw webhook delivery that carried a message (IsMessage) and nothing else,
	// stored with the message when it is recorded; nil stores nothing.
	Body []byte
}

// IsMessage reports whether m is a message of any kind, rather than an edit, a deletion or an
// identity notice.
func (m InboundMessage) IsMessage() bool {
	return m.Edit == nil && m.RevokedID == "" &&
		!(m.Type == KindSystem && m.Content.System != nil && isIdentityChange(m.Content.System.Type))
}

// InboundEdit is a customer's edit of a message they sent.
type InboundEdit struct {
	OriginalID string // the edited message's platform id
	Type       string // the new content's platform type
	Content    InboundContent
}

// Inbound records what customers send (see the decisions above).
type Inbound struct {
	Store *store.Store
	Now   func() time.Time // nil: time.Now
}

// InboundOutcome is what Record did.
type InboundOutcome struct {
	// Event is the event written: message.received, message.received_without_number,
	// message.edited, message.deleted or contact.updated; "" for a duplicate.
	Event     string
	MessageID int64
	ContactID int64
	// Duplicate: the item was applied before (a redelivery); nothing was written.
	Duplicate bool
}

// Record applies one item of the account's inbound webhook (destination is the account's
// number). It fails with an error wrapping ErrInboundNotApplicable for an item that cannot be
// applied (see the decisions), with store.ErrConflict when an identity change collides with
// another person's identifiers, and when the database fails; then nothing is written.
func (in Inbound) Record(ctx context.Context, accountID int64, destination string, m InboundMessage) (InboundOutcome, error) {
	if m.PlatformMessageID == "" {
		return InboundOutcome{}, fmt.Errorf("%w: a message without an id", ErrInboundNotApplicable)
	}
	if m.SentAt.IsZero() {
		m.SentAt = in.now()
	}
	switch {
	case m.Edit != nil:
		return in.recordEdit(ctx, accountID, m)
	case m.RevokedID != "":
		return in.recordDeletion(ctx, accountID, m)
	case !m.IsMessage():
		return in.recordIdentityChange(ctx, accountID, m)
	}
	if m.Sender.WaID == "" && m.Sender.UserID == "" {
		return InboundOutcome{}, fmt.Errorf("%w: a message without a sender (no number and no user id)", ErrInboundNotApplicable)
	}
	if m.Sender.WaID != "" && !IsWaID(m.Sender.WaID) {
		return InboundOutcome{}, fmt.Errorf("%w: the sender's number %q is not a WhatsApp id", ErrInboundNotApplicable, m.Sender.WaID)
	}
	kind := m.Content.Kind(m.Type)
	var reactedTo int64
	if kind == KindReaction {
		id, err := in.Store.MessageIDByPlatformID(ctx, accountID, m.Content.Reaction.PlatformMessageID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return InboundOutcome{}, err
		}
		reactedTo = id
	}
	fields, err := eventFields(kind, m.Content, m.ReferredProduct, reactedTo)
	if err != nil {
		return InboundOutcome{}, fmt.Errorf("message.received fields: %w", err)
	}
	var referral json.RawMessage
	if m.Referral != nil {
		if referral, err = json.Marshal(m.Referral); err != nil {
			return InboundOutcome{}, fmt.Errorf("message.received referral: %w", err)
		}
	}
	var forms []string
	if m.Sender.WaID != "" {
		forms = WaIDForms(m.Sender.WaID)
	}
	res, err := in.Store.RecordInbound(ctx, accountID, store.InboundMessage{
		PlatformMessageID:   m.PlatformMessageID,
		From:                m.Sender.WaID,
		FromForms:           forms,
		UserID:              m.Sender.UserID,
		ParentUserID:        m.Sender.ParentUserID,
		Username:            m.Sender.Username,
		ProfileName:         m.Sender.Name,
		Type:                kind,
		SentAt:              m.SentAt,
		Destination:         destination,
		Content:             m.Raw,
		EventFields:         fields,
		ReplyToPlatformID:   m.ReplyTo,
		Forwarded:           m.Forwarded,
		FrequentlyForwarded: m.FrequentlyForwarded,
		Referral:            referral,
		Window:              m.Window,
		Block:               OptOut(m.Content.TypedText(kind)),
		Body:                m.Body,
	})
	if err != nil {
		return InboundOutcome{}, err
	}
	if res.Duplicate {
		return InboundOutcome{Duplicate: true}, nil
	}
	return InboundOutcome{Event: res.EventType, MessageID: res.MessageID, ContactID: res.ContactID}, nil
}

// OptOut returns true for STOP / UNSUBSCRIBE, false for START, nil for any other text.
func OptOut(text string) *bool {
	var v bool
	switch strings.ToUpper(strings.TrimSpace(text)) {
	case "STOP", "UNSUBSCRIBE":
		v = true
	case "START":
		v = false
	default:
		return nil
	}
	return &v
}

func (in Inbound) recordEdit(ctx context.Context, accountID int64, m InboundMessage) (InboundOutcome, error) {
	e := m.Edit
	kind := e.Content.Kind(e.Type)
	fields, err := eventFields(kind, e.Content, nil, 0)
	if err != nil {
		return InboundOutcome{}, fmt.Errorf("message.edited fields: %w", err)
	}
	res, err := in.Store.RecordInboundEdit(ctx, accountID, store.InboundEdit{OriginalPlatformID: e.OriginalID,
		At: m.SentAt, Type: kind, Content: m.Raw, EventFields: fields})
	if errors.Is(err, store.ErrNotFound) {
		return InboundOutcome{}, fmt.Errorf("%w: an edit of %s, which is not a message the account received", ErrInboundNotApplicable, e.OriginalID)
	}
	if err != nil {
		return InboundOutcome{}, err
	}
	return changeOutcome(store.EventMessageEdited, res), nil
}

func (in Inbound) recordDeletion(ctx context.Context, accountID int64, m InboundMessage) (InboundOutcome, error) {
	res, err := in.Store.RecordInboundDeletion(ctx, accountID, m.RevokedID, m.SentAt)
	if errors.Is(err, store.ErrNotFound) {
		return InboundOutcome{}, fmt.Errorf("%w: a deletion of %s, which is not a message the account received", ErrInboundNotApplicable, m.RevokedID)
	}
	if err != nil {
		return InboundOutcome{}, err
	}
	return changeOutcome(store.EventMessageDeleted, res), nil
}

func changeOutcome(event string, res store.InboundChangeResult) InboundOutcome {
	if res.Duplicate {
		return InboundOutcome{Duplicate: true, MessageID: res.MessageID, ContactID: res.ContactID}
	}
	return InboundOutcome{Event: event, MessageID: res.MessageID, ContactID: res.ContactID}
}

// The platform's system types that change who a person is.
const (
	systemUserChangedNumber = "user_changed_number"
	systemUserChangedUserID = "user_changed_user_id"
)

func isIdentityChange(systemType string) bool {
	return systemType == systemUserChangedNumber || systemType == systemUserChangedUserID
}

// recordIdentityChange applies user_changed_number (the new number, and the new user id the
// platform gives with it) or user_changed_user_id to the person's contact.
func (in Inbound) recordIdentityChange(ctx context.Context, accountID int64, m InboundMessage) (InboundOutcome, error) {
	sys := m.Content.System
	previous := cmp.Or(sys.PreviousUserID, m.Sender.UserID)
	var (
		c   store.Contact
		err error
	)
	switch {
	case sys.Type == systemUserChangedNumber && sys.NewWaID != "":
		if !IsWaID(sys.NewWaID) {
			return InboundOutcome{}, fmt.Errorf("%w: user_changed_number to %q, which is not a number", ErrInboundNotApplicable, sys.NewWaID)
		}
		c, err = in.Store.ChangeContactNumber(ctx, accountID, store.NumberChange{UserID: previous, OldMobile: m.Sender.WaID,
			NewMobile: sys.NewWaID, NewForms: WaIDForms(sys.NewWaID), NewUserID: sys.NewUserID, ParentUserID: sys.NewParentUserID})
	case sys.NewUserID != "":
		// A user id change, or a number change whose new number the platform does not share:
		// the person is only known by their new user id from now on.
		var forms []string
		if m.Sender.WaID != "" {
			forms = WaIDForms(m.Sender.WaID)
		}
		c, err = in.Store.RelinkContactUserID(ctx, accountID, store.UserIDChange{PreviousUserID: previous,
			Mobile: m.Sender.WaID, MobileForms: forms, UserID: sys.NewUserID, ParentUserID: sys.NewParentUserID})
	default:
		return InboundOutcome{}, fmt.Errorf("%w: %s without the new number or user id", ErrInboundNotApplicable, sys.Type)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		if id, ok := in.identityChangeApplied(ctx, accountID, sys); ok {
			// A redelivery: the person already has the new identifiers.
			return InboundOutcome{Duplicate: true, ContactID: id}, nil
		}
		return InboundOutcome{}, fmt.Errorf("%w: %s of a person the account has no contact for (user id %q, number %q)",
			ErrInboundNotApplicable, sys.Type, previous, m.Sender.WaID)
	case err != nil:
		return InboundOutcome{}, err
	}
	return InboundOutcome{Event: store.EventContactUpdated, ContactID: c.ID}, nil
}

// identityChangeApplied reports whether a contact already has the identifiers the change
// gives (the new user id, else the new number), and which.
func (in Inbound) identityChangeApplied(ctx context.Context, accountID int64, sys *SystemNotice) (int64, bool) {
	if sys.NewUserID != "" {
		c, err := in.Store.ContactByUserID(ctx, accountID, sys.NewUserID)
		return c.ID, err == nil
	}
	c, err := in.Store.ContactByMobile(ctx, accountID, sys.NewWaID)
	return c.ID, err == nil
}

func (in Inbound) now() time.Time {
	if in.Now != nil {
		return in.Now()
	}
	return time.Now()
}
