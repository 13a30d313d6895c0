package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"gateway/gen"
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
				if time.Now().After(deadline) {
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
func (s *Server) runIdempotent(c echo.Context, next echo.HandlerFunc, accountID int64, key string) error {
	rec := &teeWriter{ResponseWriter: c.Response().Writer}
	c.Response().Writer = rec
	if err := next(c); err != nil {
		c.Error(err) // render now, into the tee
	}
	ctx := context.WithoutCancel(c.Request().Context())
	status := c.Response().Status
	if status >= 500 && status != http.StatusBadGateway {
		return s.store.ReleaseIdempotent(ctx, accountID, key)
	}
	return s.store.FinishIdempotent(ctx, accountID, key, status, rec.buf.Bytes())
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
