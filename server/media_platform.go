package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"gateway/platform/whatsapp"
	"gateway/server/domain"
)

// MediaClient is what the media operations need of the platform's client; whatsapp.Client
// implements it. server.New takes it from Deps.Platform when that implements it.
type MediaClient interface {
	MediaURL(ctx context.Context, token, mediaID string) (whatsapp.MediaInfo, error)
	DownloadMedia(ctx context.Context, token, mediaURL string) (*whatsapp.MediaStream, error)
	UploadMedia(ctx context.Context, token, phoneNumberID, filename, mimeType string, r io.Reader) (string, error)
}

// mediaPlatform adapts a MediaClient to domain.MediaPlatform, turning the client's errors into
// the domain's: a timeout, a media id the platform does not have, a refusal.
type mediaPlatform struct{ c MediaClient }

func (p mediaPlatform) LookupMedia(ctx context.Context, token, mediaID string) (domain.PlatformMedia, error) {
	info, err := p.c.MediaURL(ctx, token, mediaID)
	if err != nil {
		return domain.PlatformMedia{}, mediaPlatformError(err, true)
	}
	return domain.PlatformMedia{URL: info.URL, MimeType: info.MimeType, SHA256: info.SHA256, Size: info.FileSize}, nil
}

func (p mediaPlatform) OpenMedia(ctx context.Context, token, url string) (domain.PlatformMediaBody, error) {
	st, err := p.c.DownloadMedia(ctx, token, url)
	if err != nil {
		return domain.PlatformMediaBody{}, mediaPlatformError(err, true)
	}
	return domain.PlatformMediaBody{Body: st, ContentType: st.ContentType, Length: st.ContentLength}, nil
}

func (p mediaPlatform) UploadMedia(ctx context.Context, token, phoneNumberID, filename, mimeType string, file io.Reader) (string, error) {
	id, err := p.c.UploadMedia(ctx, token, phoneNumberID, filename, mimeType, file)
	if err != nil {
		return "", mediaPlatformError(err, false)
	}
	return id, nil
}

// mediaPlatformError is the domain's reading of a client error. For a lookup or a download
// (lookup true), the platform's code 100 or a 404 means it has no such media (an unknown id, or
// one it no longer keeps); an expired URL is reported the same way by the platform.
func mediaPlatformError(err error, lookup bool) error {
	var we *whatsapp.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", domain.ErrPlatformTimeout, err)
	case errors.As(err, &we) && lookup && (we.Code == 100 || we.HTTPStatus == http.StatusNotFound):
		return fmt.Errorf("%w: %w", domain.ErrPlatformNoMedia, err)
	case errors.As(err, &we):
		return &domain.PlatformRefusal{Code: we.Code, Message: we.Message}
	}
	return err
}
