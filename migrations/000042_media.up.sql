-- Media (issue 30, point 2): GET /v1/media/{media_id} serves a media object only to the account
-- it belongs to: an inbound message's media, or a file the account uploaded with POST /v1/media.

-- Uploads: the platform's media id, what was checked before the upload and the file's SHA-256
-- (hex), which GET /v1/media/{media_id} verifies while it streams the file back. The platform
-- keeps an uploaded file 30 days.
CREATE TABLE media_uploads (
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    media_id    text        NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('image', 'video', 'audio', 'document', 'sticker')),
    mime_type   text        NOT NULL,
    file_size   bigint      NOT NULL CHECK (file_size >= 0),
    sha256      text        NOT NULL,
    filename    text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, media_id)
);

-- Inbound media by id: the media object of an inbound image, video, audio, document or sticker
-- message, found under the message's kind (the platform's message as received), under "media",
-- or as the content itself (the typed object of the kind). The expression is the one
-- store.MediaByID compares; the index holds only inbound media messages, and none of its
-- columns changes after the insert (status reports keep their updates heap-only).
CREATE INDEX messages_inbound_media_idx ON messages
    (account_id, (COALESCE(content -> type ->> 'id', content -> 'media' ->> 'id', content ->> 'id')))
    WHERE direction = 'in' AND type IN ('image', 'video', 'audio', 'document', 'sticker');
