package domain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"gateway/server/refusal"
	"gateway/store"
)

// Media: the files customers send, fetched for the account's key holder (the platform's media
// URLs need the business's token and expire after 5 minutes, so they never reach a client), and
// files uploaded for answers. A media id is served only to the account it belongs to: the
// media of one of its inbound messages, or one of its uploads (store.MediaByID). This file
// holds the operations and their failures; media_download.go the verified stream,
// media_upload.go the received file and the upload's checks.

// MediaPlatform is what the media operations need of the messaging platform; the API adapts
// the platform's client to it. Its errors: one wrapping ErrPlatformTimeout when no answer came
// in time, ErrPlatformNoMedia when the platform has no such media id (or no longer has it), a
// *PlatformRefusal when it refused otherwise, anything else when it could not be reached.
type MediaPlatform interface {
	// LookupMedia returns where and what a media object is.
	LookupMedia(ctx context.Context, token, mediaID string) (PlatformMedia, error)
	// OpenMedia starts downloading a URL LookupMedia gave. The transfer lasts as long as ctx;
	// the body must be closed.
	OpenMedia(ctx context.Context, token, url string) (PlatformMediaBody, error)
	// UploadMedia uploads a file for the number and returns its media id.
	UploadMedia(ctx context.Context, token, phoneNumberID, filename, mimeType string, file io.Reader) (string, error)
}

// PlatformMedia is the platform's answer to a media lookup.
type PlatformMedia struct {
	URL      string
	MimeType string
	SHA256   string // hex
	Size     int64  // bytes; 0 when the platform did not say
}

// PlatformMediaBody is a download the platform has started answering.
type PlatformMediaBody struct {
	Body        io.ReadCloser
	ContentType string
	Length      int64 // -1 when the platform did not say
}

// Failures of the platform, as a MediaPlatform reports them.
var (
	ErrPlatformTimeout = errors.New("the messaging platform did not answer in time")
	ErrPlatformNoMedia = errors.New("the messaging platform has no such media")
)

// PlatformRefusal is a request the platform answered with an error of its own.
type PlatformRefusal struct {
	Code    int    // the platform's error code
	Message string // the platform's message
}

func (e *PlatformRefusal) Error() string {
	return fmt.Sprintf("the platform refused: %s (code %d)", e.Message, e.Code)
}

// MediaFailure is the kind of a MediaError; the API answers each with its own status.
type MediaFailure int

const (
	MediaNotFound     MediaFailure = iota + 1 // not the account's media, or gone from the platform (404)
	MediaNotConnected                         // the account has no number connected (409)
	MediaInvalid                              // an upload's type or form is refused (422, Fields)
	MediaTooLarge                             // an upload over its kind's limit (413)
	MediaRejected                             // the platform refused (502 platform_rejected)
	MediaUnavailable                          // the platform failed or offered an unusable file (502 platform_unavailable)
	MediaTimeout                              // the platform did not answer in time (504)
)

// MediaError is a media operation's refusal or failure, in the words the API answers with.
type MediaError struct {
	Failure MediaFailure
	Message string
	Fields  refusal.Fields // the broken rules of a MediaInvalid, by the API's field paths
	Err     error          // the cause, for the logs
}

func (e *MediaError) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *MediaError) Unwrap() error { return e.Err }

// Media fetches and uploads the account's media through the platform with its number's token.
type Media struct {
	Store *store.Store
	// Platform reaches the messaging platform; nil: none is configured and every call that
	// needs it fails with MediaUnavailable.
	Platform MediaPlatform
	// Limits says, for a MIME type, the kind of message it can be sent as and the largest file
	// the platform takes; ok is false for a type it does not take.
	Limits func(mimeType string) (kind string, maxBytes int64, ok bool)
	// MaxBytes is the largest media file the platform handles.
	MaxBytes int64
	// Stall is how long a download may go without receiving a byte before it is cut (the
	// platform's timeout); 0: never.
	Stall time.Duration
}

// Open looks the account's media id up on the platform and starts downloading it. The result
// streams the file and checks it (MediaDownload); close it. It fails with a *MediaError:
// MediaNotFound for an id that is not the account's or that the platform no longer has,
// MediaNotConnected, MediaUnavailable for a file over MaxBytes or of no known size and for a
// platform that failed, MediaRejected, MediaTimeout; and with the database's error.
func (m Media) Open(ctx context.Context, accountID int64, mediaID string) (*MediaDownload, error) {
	obj, err := m.Store.MediaByID(ctx, accountID, mediaID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &MediaError{Failure: MediaNotFound, Message: fmt.Sprintf("No media %s in this account", mediaID)}
	}
	if err != nil {
		return nil, err
	}
	conn, err := m.connection(ctx, accountID)
	if err != nil {
		return nil, err
	}
	info, err := m.Platform.LookupMedia(ctx, conn.AccessToken, mediaID)
	if err != nil {
		return nil, mediaPlatformFailure(err, "look media "+mediaID+" up")
	}
	if info.Size > m.MaxBytes {
		return nil, m.tooLargeOffer(mediaID, info.Size)
	}
	dctx, cancel := context.WithCancel(ctx)
	body, err := m.Platform.OpenMedia(dctx, conn.AccessToken, info.URL)
	if err != nil {
		cancel()
		return nil, mediaPlatformFailure(err, "download media "+mediaID)
	}
	length := body.Length
	if length < 0 {
		length = info.Size
	}
	switch {
	case length > m.MaxBytes:
		body.Body.Close()
		cancel()
		return nil, m.tooLargeOffer(mediaID, length)
	case length <= 0 && info.Size <= 0:
		body.Body.Close()
		cancel()
		return nil, &MediaError{Failure: MediaUnavailable, Message: fmt.Sprintf("The platform did not say the size of media %s; it was not fetched", mediaID)}
	}
	// The webhook's sum is the one the customer's file had; the lookup's stands in when the
	// webhook gave none.
	want, err := decodeSHA256(obj.SHA256)
	if err != nil {
		want, _ = decodeSHA256(info.SHA256)
	}
	contentType := firstNonEmpty(info.MimeType, obj.MimeType, body.ContentType, "application/octet-stream")
	return newMediaDownload(body.Body, contentType, length, want, m.Stall, cancel), nil
}

// connection is the account's number; a *MediaError when none is connected or no platform is
// configured.
func (m Media) connection(ctx context.Context, accountID int64) (store.Connection, error) {
	conn, err := m.Store.ConnectionByAccount(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return conn, &MediaError{Failure: MediaNotConnected, Message: "No number is connected to this account"}
	}
	if err != nil {
		return conn, err
	}
	if m.Platform == nil {
		return conn, &MediaError{Failure: MediaUnavailable, Message: "No messaging platform is configured"}
	}
	return conn, nil
}

func (m Media) tooLargeOffer(mediaID string, size int64) *MediaError {
	return &MediaError{Failure: MediaUnavailable, Message: fmt.Sprintf(
		"The platform offers media %s as %d bytes, over the %d bytes of its largest media file; it was not fetched", mediaID, size, m.MaxBytes)}
}

// mediaPlatformFailure turns a MediaPlatform error into the MediaError the API answers with.
func mediaPlatformFailure(err error, what string) *MediaError {
	var pr *PlatformRefusal
	switch {
	case errors.Is(err, ErrPlatformTimeout):
		return &MediaError{Failure: MediaTimeout, Message: "The messaging platform did not answer in time to " + what + "; try again", Err: err}
	case errors.Is(err, ErrPlatformNoMedia):
		return &MediaError{Failure: MediaNotFound, Message: "The platform no longer has this media (it keeps a customer's media about 30 days, an upload 30 days)", Err: err}
	case errors.As(err, &pr):
		return &MediaError{Failure: MediaRejected, Message: fmt.Sprintf("The platform refused to %s: %s (code %d)", what, pr.Message, pr.Code), Err: err}
	}
	return &MediaError{Failure: MediaUnavailable, Message: "The messaging platform could not be reached to " + what + "; try again", Err: err}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
