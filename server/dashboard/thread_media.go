package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"gateway/server/domain"
	"gateway/store"
)

// PanelMedia is what the inbox needs of the account's media (domain.Media): streaming a file a
// customer sent, and uploading an attachment of an answer.
type PanelMedia interface {
	Open(ctx context.Context, accountID int64, mediaID string) (*domain.MediaDownload, error)
	Upload(ctx context.Context, accountID int64, file *domain.MediaFile, mimeType string) (domain.UploadedMedia, error)
}

// inlineTypes are the media types a thread shows in place (images, stickers, players); every
// other file is served as a download, so a file a customer sent never runs as a page of ours.
var inlineTypes = map[string]bool{
	"image/jpeg": true, "image/png": true, "image/webp": true, "image/gif": true,
	"video/mp4": true, "video/3gpp": true,
	"audio/aac": true, "audio/amr": true, "audio/mpeg": true, "audio/mp4": true, "audio/ogg": true,
}

// panelMedia answers GET /dashboard/media/{media}: the account's media file streamed through
// the domain's download (the platform's URL and token never reach the browser; the file is
// checked against its SHA-256 as it passes and cut when it does not match). ?download=name
// serves it as an attachment of that name.
func (d *Dashboard) panelMedia(w http.ResponseWriter, r *http.Request, s *store.Session) {
	id := r.PathValue("media")
	if d.cfg.Media == nil || id == "" || len(id) > 200 {
		d.notFound(w, r, s)
		return
	}
	dl, err := d.cfg.Media.Open(r.Context(), s.AccountID, id)
	var me *domain.MediaError
	if errors.As(err, &me) {
		if me.Failure == domain.MediaNotFound {
			d.notFound(w, r, s)
			return
		}
		d.render(w, r, http.StatusBadGateway, "refused", page{Title: "File not fetched", Session: s,
			Error: "The file could not be fetched from WhatsApp: " + me.Message, Data: Prefix + "/inbox"})
		return
	} else if err != nil {
		d.serverError(w, r, err)
		return
	}
	defer dl.Close()
	ct, _, _ := mime.ParseMediaType(dl.ContentType)
	h := w.Header()
	h.Set("Content-Type", dl.ContentType)
	h.Set("Content-Length", strconv.FormatInt(dl.Length, 10))
	h.Set("Cache-Control", "private, max-age=300")
	if name := r.URL.Query().Get("download"); name != "" || !inlineTypes[strings.ToLower(ct)] {
		if name == "" {
			name = "media-" + id
		}
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	}
	w.WriteHeader(http.StatusOK)
	if n, err := dl.WriteTo(w); err != nil {
		// The last byte was kept back: the browser never takes a short or wrong file as whole.
		d.log.LogAttrs(r.Context(), slog.LevelWarn, "dashboard media cut", slog.String("media_id", id),
			slog.Int64("bytes", n), slog.String("error", err.Error()))
		panic(http.ErrAbortHandler)
	}
}
