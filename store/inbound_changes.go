package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// A user's edit or deletion of a message they sent earlier is recorded against that message
// (its edited_at and edited_content, or deleted_at; the original content stays), with its own
// event in the same statement: message.edited or message.deleted, naming the original by our
// message id and the platform's (chat_message_id, as message.status does).

// InboundEdit is a user's edit of an inbound message.
type InboundEdit struct {
	OriginalPlatformID string    // the wamid of the edited message
	At                 time.Time // the platform's timestamp of the edit
	Type               string    // the new content's type
	Content            json.RawMessage
	// EventFields is a JSON object merged into the event's data (the new content under its
	// type's name); nil for none.
	EventFields json.RawMessage
}

// InboundChangeResult is what RecordInboundEdit or RecordInboundDeletion wrote.
type InboundChangeResult struct {
	MessageID      int64 `db:"id"`
	ConversationID int64 `db:"conversation_id"`
	ContactID      int64 `db:"contact_id"`
	// Duplicate: the message already has this edit (or a later one), or is already deleted;
	// nothing was written.
	Duplicate bool
}

const (
	inboundEditSQL = `WITH u AS (
			UPDATE messages SET edited_at = $3, edited_content = jsonb_build_object('type', $4::text, 'content', $5::jsonb)
			WHERE account_id = $1 AND platform_message_id = $2 AND direction = 'in' AND (edited_at IS NULL OR edited_at < $3)
			RETURNING id, conversation_id, contact_id
		), e AS (
			INSERT INTO events (account_id, type, data)
			SELECT $1, 'message.edited', jsonb_build_object('message_id', u.id, 'conversation_id', u.conversation_id,
				'contact_id', u.contact_id, 'chat_message_id', $2::text, 'type', $4::text, 'edited_at', $7::text) || $6::jsonb
			FROM u
		)
		SELECT id, conversation_id, contact_id FROM u`
	inboundDeleteSQL = `WITH u AS (
			UPDATE messages SET deleted_at = $3
			WHERE account_id = $1 AND platform_message_id = $2 AND direction = 'in' AND deleted_at IS NULL
			RETURNING id, conversation_id, contact_id
		), e AS (
			INSERT INTO events (account_id, type, data)
			SELECT $1, 'message.deleted', jsonb_build_object('message_id', u.id, 'conversation_id', u.conversation_id,
				'contact_id', u.contact_id, 'chat_message_id', $2::text, 'deleted_at', $4::text)
			FROM u
		)
		SELECT id, conversation_id, contact_id FROM u`
	inboundKnownSQL = `SELECT id, conversation_id, contact_id FROM messages
		WHERE account_id = $1 AND platform_message_id = $2 AND direction = 'in'`
)

// RecordInboundEdit records the edit against the account's inbound message with that platform
// id and writes message.edited, in one statement. An edit already recorded (the same or an
// earlier time) changes nothing and comes back as Duplicate. It returns ErrNotFound when the
// account has no inbound message with that id (the caller dead-letters the edit).
func (s *Store) RecordInboundEdit(ctx context.Context, accountID int64, e InboundEdit) (InboundChangeResult, error) {
	content, fields := string(e.Content), string(e.EventFields)
	if content == "" {
		content = "{}"
	}
	if fields == "" {
		fields = "{}"
	}
	at := e.At.UTC()
	return s.inboundChange(ctx, accountID, e.OriginalPlatformID, inboundEditSQL, e.OriginalPlatformID, at, e.Type, content,
		fields, at.Format(time.RFC3339))
}

// RecordInboundDeletion records the user's deletion of the account's inbound message with that
// platform id and writes message.deleted, in one statement. A deletion already recorded comes
// back as Duplicate. It returns ErrNotFound when the account has no such inbound message.
func (s *Store) RecordInboundDeletion(ctx context.Context, accountID int64, originalPlatformID string, at time.Time) (InboundChangeResult, error) {
	at = at.UTC()
	return s.inboundChange(ctx, accountID, originalPlatformID, inboundDeleteSQL, originalPlatformID, at, at.Format(time.RFC3339))
}

func (s *Store) inboundChange(ctx context.Context, accountID int64, wamid, q string, args ...any) (InboundChangeResult, error) {
	if wamid == "" {
		return InboundChangeResult{}, errors.New("record inbound change: the original message's platform id is required")
	}
	var r InboundChangeResult
	err := s.getPrepared(ctx, &r, q, append([]any{accountID}, args...)...)
	switch {
	case err == nil:
		s.eventsWritten()
		return r, nil
	case !errors.Is(err, ErrNotFound):
		return InboundChangeResult{}, err
	}
	if err := s.getPrepared(ctx, &r, inboundKnownSQL, accountID, wamid); err != nil {
		return InboundChangeResult{}, err
	}
	r.Duplicate = true
	return r, nil
}

// MessageIDByPlatformID returns the id of the account's message (sent or received) with that
// platform id; ErrNotFound when the account has none.
func (s *Store) MessageIDByPlatformID(ctx context.Context, accountID int64, platformID string) (int64, error) {
	var id int64
	err := s.getPrepared(ctx, &id, `SELECT id FROM messages WHERE account_id = $1 AND platform_message_id = $2`,
		accountID, platformID)
	return id, err
}
