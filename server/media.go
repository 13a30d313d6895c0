package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/server/refusal"
	"gateway/store"
)

// GET /v1/media/{media_id} and POST /v1/media: HTTP in, the key's media operation
// (mediaAccess, chosen in keymode.go), HTTP out. The operations are domain.Media's; the
// platform's client is adapted to it in media_platform.go, test mode's fixtures are in
// testmode_media.go.

// mediaAccess is what the media operations of a key reach, as its mode selects it.
type mediaAccess interface {
	// openMedia starts streaming one of the account's media files (domain.Media.Open).
	openMedia(ctx context.Context, accountID int64, mediaID string) (*domain.MediaDownload, error)
	// uploadMedia checks and uploads a received file (domain.Media.Upload).
	uploadMedia(ctx context.Context, accountID int64, f *domain.MediaFile, mimeType string) (domain.UploadedMedia, error)
}

// liveMedia is a live key's: the account's media through the platform.
type liveMedia struct{ s *Server }

func (l liveMedia) openMedia(ctx context.Context, accountID int64, mediaID string) (*domain.MediaDownload, error) {
	return l.s.media.Open(ctx, accountID, mediaID)
}

func (l liveMedia) uploadMedia(ctx context.Context, accountID int64, f *domain.MediaFile, mimeType string) (domain.UploadedMedia, error) {
	return l.s.media.Upload(ctx, accountID, f, mimeType)
}

// mediaUploadPath is the upload's route, whose body is a file streamed to disk rather than a
// JSON document: it has a body limit of its own (mediaUploadBodyLimit) and is neither read
// whole by the strict-input scan nor by the validator (see apiMiddleware).
const mediaUploadPath = "/v1/media"

// mediaUploadBodyLimit is the platform's largest media file and room for the form around it.
const mediaUploadBodyLimit = whatsapp.MaxMediaBytes + 1<<20

// isMediaUpload reports whether c is an upload.
func isMediaUpload(c echo.Context) bool {
	return c.Path() == mediaUploadPath && c.Request().Method == http.MethodPost
}

// GetMedia streams the media file. Headers are sent before the file has been checked, so a
// file that fails the check (domain.MediaDownload) is cut: the body ends before its last byte
// and the connection closes.
func (a *api) GetMedia(ctx context.Context, req gen.GetMediaRequestObject) (gen.GetMediaResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	d, err := p.media.openMedia(ctx, p.AccountID, req.MediaId)
	if err != nil {
		return nil, mediaAPIError(err)
	}
	var digest *string
	if sum := d.SHA256Base64(); sum != "" {
		v := "sha-256=:" + sum + ":"
		digest = &v
	}
	return gen.GetMedia200AsteriskResponse{
		Body:          &mediaBody{d: d, s: a.s, ctx: ctx, mediaID: req.MediaId},
		ContentType:   d.ContentType,
		ContentLength: d.Length,
		Headers:       gen.GetMedia200ResponseHeaders{ContentLength: d.Length, ReprDigest: digest},
	}, nil
}

// mediaBody is the response body of GetMedia: the download, logged and counted when it fails.
type mediaBody struct {
	d       *domain.MediaDownload
	s       *Server
	ctx     context.Context
	mediaID string
}

func (b *mediaBody) Read(p []byte) (int, error) { return b.d.Read(p) }

func (b *mediaBody) Close() error { return b.d.Close() }

// WriteTo streams the file (io.Copy calls it). A file that did not arrive whole or did not
// match its SHA-256 is logged and counted, and the connection is cut (the last byte was kept
// back), so no client takes the short file as complete.
func (b *mediaBody) WriteTo(w io.Writer) (int64, error) {
	// The status and headers go out now: the download fills its buffer before each write, and a
	// file that fails its check before the first write must still reach the client as a 200
	// whose body is cut, not as a connection closed without an answer.
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	n, err := b.d.WriteTo(w)
	switch {
	case err == nil:
		b.s.metrics.observeMediaStream("complete")
		return n, nil
	case errors.Is(err, domain.ErrMediaChecksum):
		b.s.metrics.observeMediaStream("checksum_mismatch")
		b.s.log.ErrorContext(b.ctx, "media: the file does not match its sha256; the download was cut",
			"media_id", b.mediaID, "bytes", n, "error", err.Error())
	case errors.Is(err, domain.ErrMediaIncomplete):
		b.s.metrics.observeMediaStream("incomplete")
		b.s.log.WarnContext(b.ctx, "media: the file did not arrive whole from the platform; the download was cut",
			"media_id", b.mediaID, "bytes", n, "error", err.Error())
	default:
		// The client went away: nothing to tell it.
		b.s.metrics.observeMediaStream("client_gone")
		b.s.log.InfoContext(b.ctx, "media: the client stopped reading", "media_id", b.mediaID, "bytes", n, "error", err.Error())
	}
	b.d.Close()
	panic(http.ErrAbortHandler)
}

// UploadMedia receives the form's file (to a temporary file: the checks need its size before
// the platform is called) and uploads it.
func (a *api) UploadMedia(ctx context.Context, req gen.UploadMediaRequestObject) (gen.UploadMediaResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	file, typ, err := receiveUpload(req.Body)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	up, err := p.media.uploadMedia(ctx, p.AccountID, file, cmp.Or(typ, file.PartType))
	if err != nil {
		return nil, mediaAPIError(err)
	}
	data := gen.MediaUploaded{MediaId: up.MediaID, Kind: gen.MediaUploadedKind(up.Kind), MimeType: up.MimeType,
		FileSize: up.Size, Sha256: up.SHA256}
	if up.Simulated {
		m := gen.MediaUploadedModeTest
		data.Mode = &m
	}
	return gen.UploadMedia200JSONResponse{Body: gen.MediaUploadedEnvelope{Success: true, Message: "Media uploaded", Data: data}}, nil
}

// maxTypeField bounds the form's type field.
const maxTypeField = 255

// receiveUpload reads the form: the file (to a temporary file, up to the platform's largest
// media file) and the type field. Other fields are skipped. It fails with the 422 of a form
// without a file, with two, or with a type field that is not acceptable text, and with the body
// limit's 413.
func receiveUpload(r *multipart.Reader) (*domain.MediaFile, string, error) {
	var (
		file *domain.MediaFile
		typ  string
	)
	fail := func(err error) (*domain.MediaFile, string, error) {
		if file != nil {
			file.Close()
		}
		return nil, "", err
	}
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(formReadError(err))
		}
		switch part.FormName() {
		case "file":
			if file != nil {
				return fail(invalid(refusal.One("file", "sent twice: upload one file per request")))
			}
			file, err = domain.ReceiveMediaFile(part, part.FileName(), part.Header.Get("Content-Type"), whatsapp.MaxMediaBytes)
			if err != nil {
				var me *domain.MediaError
				if errors.As(err, &me) {
					return fail(mediaAPIError(err))
				}
				return fail(formReadError(err))
			}
		case "type":
			b, err := io.ReadAll(io.LimitReader(part, maxTypeField+1))
			if err != nil {
				return fail(formReadError(err))
			}
			typ = strings.TrimSpace(string(b))
			if len(b) > maxTypeField {
				return fail(invalid(refusal.One("type", fmt.Sprintf("at most %d characters", maxTypeField))))
			}
			if reason := badText(typ); reason != "" {
				return fail(invalid(refusal.One("type", reason)))
			}
		default:
			if _, err := io.Copy(io.Discard, part); err != nil {
				return fail(formReadError(err))
			}
		}
	}
	if file == nil {
		return nil, "", invalid(refusal.One("file", "required: the file to upload, as a form part named file"))
	}
	return file, typ, nil
}

// formReadError is the answer to a form that could not be read: the body limit's 413 as it
// is, anything else a 422 about the body.
func formReadError(err error) error {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he
	}
	return invalid(refusal.One("body", "malformed multipart/form-data: "+err.Error()))
}

// checkMultipart refuses, before the handler, an upload whose body is not multipart/form-data
// with a boundary (the generated handler could not read it).
func checkMultipart(req *http.Request) error {
	mt, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return invalid(refusal.One("body", "must be multipart/form-data (with a boundary), the file in a part named file"))
	}
	return nil
}

// mediaAPIError is the API's answer to a media operation's failure.
func mediaAPIError(err error) error {
	var me *domain.MediaError
	if !errors.As(err, &me) {
		return err
	}
	ae := &apiError{Message: me.Message, cause: me.Err}
	switch me.Failure {
	case domain.MediaNotFound:
		ae.Status, ae.Code = http.StatusNotFound, gen.ErrorCodeNotFound
	case domain.MediaNotConnected:
		ae.Status, ae.Code = http.StatusConflict, gen.ErrorCodeNumberNotConnected
	case domain.MediaInvalid:
		return invalid(me.Fields)
	case domain.MediaTooLarge:
		ae.Status, ae.Code = http.StatusRequestEntityTooLarge, gen.ErrorCodePayloadTooLarge
	case domain.MediaRejected:
		ae.Status, ae.Code = http.StatusBadGateway, gen.ErrorCodePlatformRejected
	case domain.MediaTimeout:
		ae.Status, ae.Code = http.StatusGatewayTimeout, gen.ErrorCodePlatformUnavailable
	default:
		ae.Status, ae.Code = http.StatusBadGateway, gen.ErrorCodePlatformUnavailable
	}
	return ae
}

// newMediaOps builds the media operations over the platform's client (none when p does not
// implement MediaClient); stall is the platform's timeout, which also bounds a download's wait
// for each chunk.
func newMediaOps(st *store.Store, p Platform, stall time.Duration) domain.Media {
	m := domain.Media{Store: st, Limits: mediaLimits, MaxBytes: whatsapp.MaxMediaBytes, Stall: stall}
	if c, ok := p.(MediaClient); ok {
		m.Platform = mediaPlatform{c}
	}
	return m
}

// mediaLimits is the platform's limit for a MIME type (whatsapp.MediaLimitFor).
func mediaLimits(mimeType string) (string, int64, bool) {
	l, ok := whatsapp.MediaLimitFor(mimeType)
	return l.Kind, l.MaxBytes, ok
}

// streamedBody reports whether an operation's body is a form with a file (the upload), which
// its handler streams: apiMiddleware then neither scans it for strict input nor validates it
// with kin-openapi, both of which would read it whole into memory.
func streamedBody(route *routers.Route) bool {
	op := route.Operation
	return op != nil && op.RequestBody != nil && op.RequestBody.Value != nil &&
		op.RequestBody.Value.Content.Get("multipart/form-data") != nil
}

// streamedRequest is strictRequest for a streamed body: the parameters are checked, the body is
// left for the handler, which refuses what it cannot read. It must be multipart/form-data. The
// upload takes no Idempotency-Key (a body read only by its handler cannot be fingerprinted), so
// a key sent is dropped rather than bound to a request it cannot tell apart from another.
func (s *Server) streamedRequest(req *http.Request, route *routers.Route, pathParams map[string]string) error {
	probe := *req
	probe.Body = http.NoBody
	fe, _, err := strictInput(&probe, route, pathParams)
	if err != nil {
		return s.bodyReadFailed(req, err)
	}
	if len(fe) > 0 {
		return &apiError{Status: http.StatusUnprocessableEntity, Code: gen.ErrorCodeValidationFailed,
			Message: "Invalid request: " + strings.Join(sortedKeys(fe), ", "), Errors: fe}
	}
	req.Header.Del("Idempotency-Key")
	return checkMultipart(req)
}
