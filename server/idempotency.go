package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/store"
)

// defaultIdempotencyWait bounds how long a request waits for the first request with the same
// key to finish before answering 409 (Options.IdempotencyWait overrides it).
const defaultIdempotencyWait = 15 * time.Second

// idempotency makes POSTs with an Idempotency-Key safe to retry: the first request runs and its
// response is stored; the same key with the same request replays that response byte for byte
// (Idempotent-Replayed: true), even while the first is still running (the retry waits for it);
// the same key with another request is a 422. Responses of unexpected failures (500) are not
// stored, so a retry runs again.
func (s *Server) idempotency(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		key := req.Header.Get("Idempotency-Key")
		if req.Method != http.MethodPost || key == "" {
			return next(c)
		}
		ctx := req.Context()
		p, err := principalFrom(ctx)
		if err != nil {
			return err
		}
		fp := fingerprint(req, p)
		// Keys are scoped per account and per mode, so test traffic never collides with live.
		key = p.Mode + ":" + key
		deadline := time.Now().Add(s.opts.IdempotencyWait)
		for delay := 5 * time.Millisecond; ; delay = min(delay*2, 100*time.Millisecond) {
			rec, err := s.store.BeginIdempotent(ctx, p.AccountID, key, fp)
			if err != nil {
				return err
			}
			switch rec.State {
			case store.IdempotencyReplay:
				h := c.Response().Header()
				h.Set("Idempotent-Replayed", "true")
				h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
				c.Response().WriteHeader(rec.StatusCode)
				_, err := c.Response().Write(rec.Response)
				return err
			case store.IdempotencyMismatch:
				return &apiError{Status: http.StatusUnprocessableEntity, Code: gen.ErrorCodeIdempotencyConflict,
					Message: "This Idempotency-Key was already used with a different request",
					Errors:  gen.FieldErrors{"header.Idempotency-Key": {"already used with a different request body or endpoint"}}}
			case store.IdempotencyInFlight:
				// The wait's end is read once per round: a message read that outlasts the
				// deadline must not turn the message's outcome into a bare "in progress".
				expired := time.Now().After(deadline)
				if rec.MessageID != 0 {
					// A send holds the key and its platform call may have happened: answer from
					// its message, never by running the request again.
					done, err := s.answerFromMessage(c, p.AccountID, key, rec.MessageID, expired)
					if done {
						return err
					}
				}
				if expired {
					return newAPIError(http.StatusConflict, gen.ErrorCodeIdempotencyInProgress,
						"A request with this Idempotency-Key is still in progress")
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(delay):
				}
				continue
			}
			return s.runIdempotent(c, next, p.AccountID, key)
		}
	}
}

// runIdempotent runs the request that holds the key and stores its response. Storing uses a
// context that outlives the client, so a disconnect cannot leave the key unfinished.
//
// A live send binds the key to its message before calling the platform (store.BeginSend). From
// then on the key is never released for a re-send: an unexpected failure leaves it held
// (store.ReleaseIdempotent keeps bound keys), and a send whose outcome is unknown leaves it
// unfinished on purpose, so that a retry answers from the message (answerFromMessage) once a
// status report or the late recording has confirmed it.
func (s *Server) runIdempotent(c echo.Context, next echo.HandlerFunc, accountID int64, key string) error {
	rec := &teeWriter{ResponseWriter: c.Response().Writer}
	c.Response().Writer = rec
	held := &domain.HeldKey{Key: key}
	c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), heldKeyCtx{}, held)))
	if err := next(c); err != nil {
		c.Error(err) // render now, into the tee
	}
	ctx := context.WithoutCancel(c.Request().Context())
	status := c.Response().Status
	if held.OutcomeUnknown() {
		return nil
	}
	if status >= 500 && status != http.StatusBadGateway {
		return s.store.ReleaseIdempotent(ctx, accountID, key)
	}
	return s.store.FinishIdempotent(ctx, accountID, key, status, rec.buf.Bytes())
}

// heldKeyCtx keys the request context's *domain.HeldKey: the Idempotency-Key the request holds
// (as stored: mode-scoped), and what the send pipeline reports about its outcome.
type heldKeyCtx struct{}

// heldKeyFrom returns the key the request holds; nil without one.
func heldKeyFrom(ctx context.Context) *domain.HeldKey {
	h, _ := ctx.Value(heldKeyCtx{}).(*domain.HeldKey)
	return h
}

// answerFromMessage answers a retry whose key is held by the send that recorded messageID
// (done reports whether it answered): the send as recorded once the platform's id is known
// (replayed, and stored as the key's response), the platform's refusal for a failed send, a 409
// saying the outcome is being confirmed when it is unknown (or final is set), and nothing while
// the first request is still running.
func (s *Server) answerFromMessage(c echo.Context, accountID int64, key string, messageID int64, final bool) (done bool, err error) {
	ctx := c.Request().Context()
	m, err := s.store.MessageByID(ctx, accountID, messageID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return true, err
	}
	confirming := &apiError{Status: http.StatusConflict, Code: gen.ErrorCodeIdempotencyInProgress,
		Message: fmt.Sprintf("The send made with this Idempotency-Key (message %d) reached the platform, but its outcome is "+
			"still being confirmed; it will not be sent again. Read GET /v1/messages/%d", messageID, messageID),
		MessageID: messageID, OutcomeUnknown: true}
	switch {
	case err != nil:
		return true, confirming
	case m.PlatformMessageID != "":
		var campaign int64
		if m.CampaignID != nil {
			campaign = *m.CampaignID
		}
		// The send's own answer, byte for byte as the strict handler encodes it (the status a
		// send reports is sent), so whichever of the two stores the key's response first, the
		// replays are the same.
		created, err := s.store.ContactCreatedBySend(ctx, accountID, m.ContactID, m.CreatedAt)
		if err != nil {
			return true, err
		}
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(gen.SendEnvelope{Success: true, Message: "Message sent", Data: gen.SendResult{
			MessageId: m.ID, ChatMessageId: m.PlatformMessageID, CampaignId: campaign, ConversationId: m.ConversationID,
			ContactId: m.ContactID, ContactCreated: created, Status: gen.Sent}}); err != nil {
			return true, err
		}
		body := buf.Bytes()
		if err := s.store.FinishIdempotent(context.WithoutCancel(ctx), accountID, key, http.StatusOK, body); err != nil {
			return true, err
		}
		h := c.Response().Header()
		h.Set("Idempotent-Replayed", "true")
		h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		c.Response().WriteHeader(http.StatusOK)
		_, err = c.Response().Write(body)
		return true, err
	case m.Status == "failed":
		return true, &apiError{Status: http.StatusBadGateway, Code: gen.ErrorCodePlatformRejected,
			Message: "The platform rejected the send: " + deref(m.ErrorTitle)}
	case m.OutcomeUnknown || final:
		return true, confirming
	}
	return false, nil
}

type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}

// fingerprint identifies a request: method, operation path, key mode and the validated body
// re-encoded canonically (object keys sorted), so formatting differences do not matter.
func fingerprint(req *http.Request, p Principal) []byte {
	h := sha256.New()
	h.Write([]byte(req.Method + " " + req.URL.Path + " " + p.Mode + "\n"))
	if vb, ok := req.Body.(interface{ ValidatedValue() any }); ok {
		b, _ := json.Marshal(vb.ValidatedValue())
		h.Write(b)
	}
	return h.Sum(nil)
}
