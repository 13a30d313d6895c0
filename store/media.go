package store

import (
	"context"
)

// Media an account may read through GET /v1/media/{media_id}: the media of its inbound
// messages and the files it uploaded (migration 000042). The platform's media ids are global;
// these statements answer only for the account named.

// Origins of a media object.
const (
	MediaInbound = "inbound" // the media of an inbound message
	MediaUpload  = "upload"  // a file the account uploaded
)

// MediaObject is a media object of the account.
type MediaObject struct {
	MediaID string `db:"media_id"`
	Origin  string `db:"origin"` // MediaInbound or MediaUpload
	// MimeType is the type the webhook or the upload named ("" when the webhook gave none).
	MimeType string `db:"mime_type"`
	// SHA256 is the file's checksum as recorded: the webhook's (base64 as the platform sends
	// it, or hex) for inbound media, hex for uploads; "" when the webhook gave none.
	SHA256   string `db:"sha256"`
	Size     int64  `db:"file_size"` // the uploaded file's size; 0 for inbound media (the platform says)
	Filename string `db:"filename"`
	// MessageID is the inbound message that carried the media (0 for an upload).
	MessageID int64 `db:"message_id"`
}

// MediaUploadRecord is a file uploaded to the platform for the account.
type MediaUploadRecord struct {
	MediaID  string
	Kind     string // image, video, audio, document or sticker
	MimeType string
	Size     int64
	SHA256   string // hex
	Filename string
}

// mediaByIDSQL finds an upload first, then the newest inbound message carrying the media id.
// The inbound expression is messages_inbound_media_idx's: the media object under the message's
// kind, under "media", or the content itself.
const mediaByIDSQL = `SELECT media_id, origin, mime_type, sha256, file_size, filename, message_id FROM (
		SELECT media_id, 'upload' AS origin, mime_type, sha256, file_size, filename, 0::bigint AS message_id, 0 AS rank
		FROM media_uploads WHERE account_id = $1 AND media_id = $2
		UNION ALL
		(SELECT $2, 'inbound', COALESCE(o ->> 'mime_type', ''), COALESCE(o ->> 'sha256', ''), 0::bigint,
			COALESCE(o ->> 'filename', ''), m.id, 1
		FROM messages m CROSS JOIN LATERAL (SELECT COALESCE(m.content -> m.type, m.content -> 'media', m.content) AS o) x
		WHERE m.account_id = $1 AND m.direction = 'in' AND m.type IN ('image', 'video', 'audio', 'document', 'sticker')
			AND COALESCE(m.content -> m.type ->> 'id', m.content -> 'media' ->> 'id', m.content ->> 'id') = $2
		ORDER BY m.id DESC LIMIT 1)
	) found ORDER BY rank LIMIT 1`

// MediaByID returns the account's media object with that platform media id: a file it
// uploaded, else the media of its newest inbound message carrying the id. It fails with
// ErrNotFound when the account has neither (another account's media included), and when the
// database fails.
func (s *Store) MediaByID(ctx context.Context, accountID int64, mediaID string) (MediaObject, error) {
	var m MediaObject
	if err := s.getPrepared(ctx, &m, mediaByIDSQL, accountID, safeText(mediaID)); err != nil {
		return MediaObject{}, translate(err)
	}
	return m, nil
}

// RecordMediaUpload records a file the platform accepted for the account, so that GET
// /v1/media/{media_id} and sends can tell it is the account's. Recording the same id again
// keeps the first record. It fails only when the database does.
func (s *Store) RecordMediaUpload(ctx context.Context, accountID int64, u MediaUploadRecord) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO media_uploads (account_id, media_id, kind, mime_type, file_size, sha256, filename)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_id, media_id) DO NOTHING`,
		accountID, safeText(u.MediaID), u.Kind, safeText(u.MimeType), u.Size, u.SHA256, safeText(u.Filename))
	return translate(err)
}
