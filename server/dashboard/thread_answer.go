package dashboard

import (
	"errors"
	"mime"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"gateway/server/domain"
	"gateway/store"
)

// The thread's composer: a text, an attachment (a file uploaded through the domain's media
// upload, or an https link) with the text as its caption, a quoted reply, or a reaction; all
// sent through the API's answer operation (domain.Answerer: the window, blocked contacts,
// idempotency by the page's key, events with source "panel").

// maxAttachment is the largest upload the composer takes (the platform's largest media file)
// and room for the form around it.
const maxAttachment = 100<<20 + 1<<20

// threadAnswer sends the composer's answer and shows the thread again, with a notice or the
// refusal's words.
func (d *Dashboard) threadAnswer(w http.ResponseWriter, r *http.Request, s *store.Session) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		r.Body = http.MaxBytesReader(w, r.Body, maxAttachment)
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			d.threadForm(w, r, s, http.StatusRequestEntityTooLarge, "The attachment could not be read: files take up to 100 MiB.")
			return
		}
		defer r.MultipartForm.RemoveAll()
		if field := unstorableField(r.MultipartForm.Value); field != "" {
			d.badRequest(w, r, s, "The field “"+field+"” contains a NUL character or invalid UTF-8, which cannot be stored.")
			return
		}
	}
	conv, c, ok := d.conversationOf(w, r, s)
	if !ok {
		return
	}
	if d.cfg.Answerer == nil {
		d.threadForm(w, r, s, http.StatusServiceUnavailable, "Answering from the panel is not configured on this server.")
		return
	}
	in := domain.PanelAnswer{Destination: c.Mobile, Body: r.FormValue("body"), IdempotencyKey: r.FormValue("key")}
	if c.Mobile == "" {
		in.UserID = c.UserID
	}
	in.ReplyTo, _ = strconv.ParseInt(r.FormValue("reply_to"), 10, 64)
	in.ReactTo, _ = strconv.ParseInt(r.FormValue("react_to"), 10, 64)
	in.Emoji = r.FormValue("emoji")
	if in.ReactTo != 0 {
		in.IdempotencyKey = "" // a reaction is its own form on each message, sent once per press
	} else if msg, status := d.attachment(r, s, &in); msg != "" {
		d.threadForm(w, r, s, status, msg)
		return
	} else if in.Media == nil && strings.TrimSpace(in.Body) == "" {
		d.threadForm(w, r, s, http.StatusUnprocessableEntity, "Type the answer, or attach a file or a link.")
		return
	}
	sent, err := d.cfg.Answerer.AnswerFromPanel(r.Context(), s.AccountID, in)
	if refused := domain.AsSendError(err); refused != nil {
		d.threadForm(w, r, s, refusalStatus(refused.Kind), refused.Message)
		return
	} else if err != nil {
		d.serverError(w, r, err)
		return
	}
	// The answer operation itself made it the conversation's latest activity.
	notice := "answered-inbox"
	if sent.Replayed {
		notice = "sent-before"
	}
	redirect(w, r, Prefix+"/inbox/"+strconv.FormatInt(conv, 10), notice)
}

// attachment makes in a media answer when the form carries a file (uploaded now through the
// domain's media upload) or a link; the text becomes its caption. It returns the refusal's
// words and status, "" when there is none.
func (d *Dashboard) attachment(r *http.Request, s *store.Session, in *domain.PanelAnswer) (string, int) {
	caption := strings.TrimSpace(in.Body)
	if link := strings.TrimSpace(r.FormValue("link")); link != "" {
		kind := r.FormValue("link_kind")
		in.MediaKind, in.Media = kind, &domain.AnswerMedia{Link: link}
		if kind == domain.AnswerDocument {
			in.Media.Filename = filepath.Base(link)
		}
	}
	if r.MultipartForm != nil && len(r.MultipartForm.File["file"]) > 0 {
		fh := r.MultipartForm.File["file"][0]
		if fh.Size > 0 {
			if d.cfg.Media == nil {
				return "Uploading files is not configured on this server; send a link instead.", http.StatusServiceUnavailable
			}
			f, err := fh.Open()
			if err != nil {
				return "The attachment could not be read. Try again.", http.StatusBadRequest
			}
			defer f.Close()
			partType := fh.Header.Get("Content-Type")
			file, err := domain.ReceiveMediaFile(f, fh.Filename, partType, 100<<20)
			if err != nil {
				return mediaWords(err), http.StatusRequestEntityTooLarge
			}
			defer file.Close()
			mt, _, _ := mime.ParseMediaType(partType)
			up, err := d.cfg.Media.Upload(r.Context(), s.AccountID, file, mt)
			if err != nil {
				return mediaWords(err), http.StatusUnprocessableEntity
			}
			in.MediaKind, in.Media = up.Kind, &domain.AnswerMedia{ID: up.MediaID}
			if up.Kind == domain.AnswerDocument {
				in.Media.Filename = fh.Filename
			}
		}
	}
	if in.Media != nil && caption != "" {
		if in.MediaKind == domain.AnswerAudio || in.MediaKind == domain.AnswerSticker {
			return "Audio and stickers take no caption: send the text on its own.", http.StatusUnprocessableEntity
		}
		in.Media.Caption = caption
	}
	return "", 0
}

// mediaWords is a media refusal in the words its error gives.
func mediaWords(err error) string {
	var me *domain.MediaError
	if errors.As(err, &me) {
		return "The attachment was not sent: " + me.Error()
	}
	return "The attachment was not sent: " + err.Error()
}
