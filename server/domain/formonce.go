package domain

import (
	"context"
	"crypto/sha256"
	"encoding/json"

	"gateway/store"
)

// formOnce makes a dashboard form's send happen once per page: the page's key (scoped by
// scope) is kept as an idempotency record like the API's Idempotency-Key. A second submit of
// the same form answers with what the first one recorded (Replayed); another form under the
// same key, or one still in flight, is refused with again. send gets the held key, which binds
// it to its message before the platform call (store.BeginSend): from then on no failure
// releases it for a re-send. Without a key, send runs unguarded.
func (s *Sends) formOnce(ctx context.Context, accountID int64, scope, pageKey string, form any, again string,
	send func(*HeldKey) (int64, error)) (FormSent, error) {
	if pageKey == "" {
		id, err := send(nil)
		if err != nil {
			return FormSent{}, err
		}
		return FormSent{MessageID: id}, nil
	}
	st := s.cfg.Store
	key := scope + ":" + pageKey
	fp, _ := json.Marshal(form)
	sum := sha256.Sum256(fp)
	rec, err := st.BeginIdempotent(ctx, accountID, key, sum[:])
	if err != nil {
		return FormSent{}, err
	}
	switch rec.State {
	case store.IdempotencyReplay:
		var sent FormSent
		if err := json.Unmarshal(rec.Response, &sent); err != nil || sent.MessageID == 0 {
			return FormSent{}, formRefusalOf(rec.Response)
		}
		sent.Replayed = true
		return sent, nil
	case store.IdempotencyMismatch, store.IdempotencyInFlight:
		return FormSent{}, &SendError{Kind: KindConflict, Code: CodeIdempotencyConflict, Message: again}
	}
	held := &HeldKey{Key: key}
	id, err := send(held)
	ctx = context.WithoutCancel(ctx)
	sent := FormSent{MessageID: id}
	refused := AsSendError(err)
	if !held.OutcomeUnknown() { // an unknown outcome leaves the key held, unfinished
		switch {
		case refused != nil && (refused.Kind == KindInvalid || refused.Kind == KindNotFound):
			// Refused before anything was sent (a wrong variable count, a missing template):
			// the person corrects the form and submits it again with the same key.
			st.ReleaseIdempotent(ctx, accountID, key)
		case refused != nil:
			out, _ := json.Marshal(formRefusal{Kind: refused.Kind, Code: refused.Code, Message: refused.Message})
			st.FinishIdempotent(ctx, accountID, key, formRefusalStatus, out)
		case err != nil:
			// Released only if no message holds it yet (store.ReleaseIdempotent keeps bound keys).
			st.ReleaseIdempotent(ctx, accountID, key)
		default:
			out, _ := json.Marshal(sent)
			st.FinishIdempotent(ctx, accountID, key, formSentStatus, out)
		}
	}
	if err != nil {
		return FormSent{}, err
	}
	return sent, nil
}
