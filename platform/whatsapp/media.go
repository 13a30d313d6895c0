package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"sync/atomic"
	"time"
)

// MaxMediaBytes is the largest media file the platform handles (a document).
const MaxMediaBytes = 100 << 20

// MediaLimit is what the platform accepts for one MIME type: the message kind it can be sent
// as and the largest size in bytes.
type MediaLimit struct {
	Kind     string // TypeImage, TypeVideo, TypeAudio, TypeDocument or TypeSticker
	MaxBytes int64
}

// mediaLimits are the platform's accepted upload types and sizes (1 MB = 2^20 bytes). A webp
// sticker may be 100 KB static or 500 KB animated; uploads are checked against the larger.
var mediaLimits = map[string]MediaLimit{
	"image/jpeg":                    {TypeImage, 5 << 20},
	"image/png":                     {TypeImage, 5 << 20},
	"video/mp4":                     {TypeVideo, 16 << 20},
	"video/3gpp":                    {TypeVideo, 16 << 20},
	"audio/aac":                     {TypeAudio, 16 << 20},
	"audio/amr":                     {TypeAudio, 16 << 20},
	"audio/mpeg":                    {TypeAudio, 16 << 20},
	"audio/mp4":                     {TypeAudio, 16 << 20},
	"audio/ogg":                     {TypeAudio, 16 << 20},
	"image/webp":                    {TypeSticker, 500 << 10},
	"text/plain":                    {TypeDocument, MaxMediaBytes},
	"application/pdf":               {TypeDocument, MaxMediaBytes},
	"application/msword":            {TypeDocument, MaxMediaBytes},
	"application/vnd.ms-excel":      {TypeDocument, MaxMediaBytes},
	"application/vnd.ms-powerpoint": {TypeDocument, MaxMediaBytes},
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   {TypeDocument, MaxMediaBytes},
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         {TypeDocument, MaxMediaBytes},
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": {TypeDocument, MaxMediaBytes},
}

// MediaLimitFor returns the platform's limit for a MIME type (parameters such as
// "; codecs=opus" and case are ignored); ok is false for a type the platform does not accept.
func MediaLimitFor(mimeType string) (limit MediaLimit, ok bool) {
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return MediaLimit{}, false
	}
	limit, ok = mediaLimits[mt]
	return limit, ok
}

// MediaInfo is the platform's answer to a media id lookup. URL is valid for 5 minutes and must
// be fetched with the business's token (DownloadMedia); it must never reach our API's clients.
type MediaInfo struct {
	ID       string
	URL      string
	MimeType string
	SHA256   string // hex
	FileSize int64  // bytes
}

// MediaURL looks up a media object (GET /{media-id}) with token. A media id that does not exist
// or that token may not read is a *Error (code 100). Other errors are as for SendTemplate.
func (c *Client) MediaURL(ctx context.Context, token, mediaID string) (MediaInfo, error) {
	if err := checkToken(token); err != nil {
		return MediaInfo{}, err
	}
	if err := checkID("media id", mediaID); err != nil {
		return MediaInfo{}, err
	}
	u, err := c.endpoint(mediaID)
	if err != nil {
		return MediaInfo{}, err
	}
	data, err := c.do(ctx, http.MethodGet, u, token, nil)
	if err != nil {
		return MediaInfo{}, err
	}
	var resp struct {
		ID       flexString `json:"id"`
		URL      string     `json:"url"`
		MimeType string     `json:"mime_type"`
		SHA256   string     `json:"sha256"`
		FileSize flexInt    `json:"file_size"`
	}
	if err := lenientUnmarshal(data, &resp); err != nil {
		return MediaInfo{}, fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if resp.URL == "" {
		return MediaInfo{}, fmt.Errorf("%w: no url in the media answer", ErrMalformedResponse)
	}
	return MediaInfo{ID: string(resp.ID), URL: resp.URL, MimeType: resp.MimeType, SHA256: resp.SHA256, FileSize: int64(resp.FileSize)}, nil
}

// MediaStream is a media file being downloaded. Read it to the end (or as far as needed) and
// Close it; nothing is buffered beyond what Read is given.
type MediaStream struct {
	ContentType   string
	ContentLength int64 // -1 when the platform did not say

	body   io.ReadCloser
	cancel context.CancelFunc
}

// Read reads the file; a failure of the connection or the context wraps ErrUnavailable.
func (m *MediaStream) Read(p []byte) (int, error) {
	n, err := m.body.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: read media: %w", ErrUnavailable, err)
	}
	return n, err
}

// Close ends the download and releases the connection.
func (m *MediaStream) Close() error {
	err := m.body.Close()
	m.cancel()
	return err
}

// DownloadMedia starts fetching a media URL from MediaURL with token and returns the stream once
// the platform has answered. The client's timeout bounds the wait for the answer's headers;
// the transfer itself is bounded only by ctx, which must stay alive until Close. The token is
// sent only over https, or to the host of the client's base URL. Errors are as for MediaURL; an
// expired URL is a *Error.
func (c *Client) DownloadMedia(ctx context.Context, token, mediaURL string) (*MediaStream, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	if err := c.checkMediaURL(mediaURL); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var expired atomic.Bool
	var timer *time.Timer
	if d := time.Duration(c.timeout.Load()); d > 0 {
		timer = time.AfterFunc(d, func() { expired.Store(true); cancel() })
	}
	resp, err := c.roundTrip(ctx, http.MethodGet, mediaURL, token, "", nil)
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		cancel()
		if expired.Load() {
			return nil, fmt.Errorf("%w: no answer within the client timeout: %w", ErrUnavailable, context.DeadlineExceeded)
		}
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer cancel()
		defer resp.Body.Close()
		_, err := readAnswer(resp)
		return nil, err
	}
	return &MediaStream{ContentType: resp.Header.Get("Content-Type"), ContentLength: resp.ContentLength, body: resp.Body, cancel: cancel}, nil
}

// checkMediaURL refuses a URL the token must not be sent to.
func (c *Client) checkMediaURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%w: media URL %q is not an absolute URL", ErrInvalidArgument, raw)
	}
	if u.Scheme == "https" || (c.baseURL != nil && u.Scheme == c.baseURL.Scheme && u.Host == c.baseURL.Host) {
		return nil
	}
	return fmt.Errorf("%w: media URL %q is neither https nor on the platform's host", ErrInvalidArgument, raw)
}

// errTooLarge stops an upload whose file exceeds its type's limit.
var errTooLarge = errors.New("file exceeds the platform's size limit")

// UploadMedia uploads a file for later sends (multipart POST /{phone-number-id}/media) and
// returns its media id. The file is streamed from r, never held in memory. A MIME type the
// platform does not accept, or a file larger than its limit (MediaLimitFor), fails with
// ErrInvalidArgument (a too-large file only once that many bytes were read). The client's
// timeout bounds the wait for the answer after the file was sent. Other errors are as for
// SendTemplate.
func (c *Client) UploadMedia(ctx context.Context, token, phoneNumberID, filename, mimeType string, r io.Reader) (string, error) {
	if err := checkToken(token); err != nil {
		return "", err
	}
	if err := checkID("phone number id", phoneNumberID); err != nil {
		return "", err
	}
	limit, ok := MediaLimitFor(mimeType)
	if !ok {
		return "", fmt.Errorf("%w: the platform does not accept media of type %q", ErrInvalidArgument, mimeType)
	}
	if filename == "" {
		filename = "file"
	}
	u, err := c.endpoint(phoneNumberID, "media")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		expired, tooLarge atomic.Bool
		answerTimer       atomic.Pointer[time.Timer]
	)
	defer func() {
		if t := answerTimer.Load(); t != nil {
			t.Stop()
		}
	}()
	pr, pw := io.Pipe()
	defer pr.Close() // unblocks the writer when the request ends early
	mw := multipart.NewWriter(pw)
	go func() {
		err := writeUpload(mw, filename, mimeType, &limitedReader{r: r, left: limit.MaxBytes})
		if errors.Is(err, errTooLarge) {
			tooLarge.Store(true)
		}
		if err == nil {
			err = mw.Close()
		}
		if err == nil {
			if d := time.Duration(c.timeout.Load()); d > 0 {
				answerTimer.Store(time.AfterFunc(d, func() { expired.Store(true); cancel() }))
			}
		}
		pw.CloseWithError(err)
	}()
	resp, err := c.roundTrip(ctx, http.MethodPost, u, token, mw.FormDataContentType(), pr)
	if err != nil {
		switch {
		case tooLarge.Load():
			return "", fmt.Errorf("%w: %s file larger than %d bytes", ErrInvalidArgument, limit.Kind, limit.MaxBytes)
		case expired.Load():
			return "", fmt.Errorf("%w: no answer within the client timeout: %w", ErrUnavailable, context.DeadlineExceeded)
		}
		return "", err
	}
	defer resp.Body.Close()
	data, err := readAnswer(resp)
	if err != nil {
		return "", err
	}
	var out struct {
		ID flexString `json:"id"`
	}
	if err := lenientUnmarshal(data, &out); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if out.ID == "" {
		return "", fmt.Errorf("%w: no media id in answer", ErrMalformedResponse)
	}
	return string(out.ID), nil
}

// writeUpload writes the form: messaging_product, type, then the file.
func writeUpload(mw *multipart.Writer, filename, mimeType string, file io.Reader) error {
	if err := mw.WriteField("messaging_product", "whatsapp"); err != nil {
		return err
	}
	if err := mw.WriteField("type", mimeType); err != nil {
		return err
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": filename}))
	h.Set("Content-Type", mimeType)
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(part, file)
	return err
}

// limitedReader fails with errTooLarge once more than left bytes were read.
type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, errTooLarge
	}
	return n, err
}
