package server

import (
	"context"
	"log/slog"
)

type requestIDKey struct{}

// requestAttrs adds, to every record logged with a request's context, the request id and, once
// the key is authenticated, the account id. Never the key itself.
type requestAttrs struct{ slog.Handler }

func (h requestAttrs) Handle(ctx context.Context, r slog.Record) error {
	if id, ok := ctx.Value(requestIDKey{}).(string); ok {
		r.AddAttrs(slog.String("request_id", id))
	}
	if a, ok := apiRequestFrom(ctx); ok {
		r.AddAttrs(slog.Int64("account_id", a.principal.AccountID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return requestAttrs{h.Handler.WithAttrs(as)}
}

func (h requestAttrs) WithGroup(name string) slog.Handler {
	return requestAttrs{h.Handler.WithGroup(name)}
}
