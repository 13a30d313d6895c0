package server

import (
	"context"
	"strconv"

	"github.com/getkin/kin-openapi/routers"

	"gateway/store"
)

// Read-ahead. Polling a message (GetMessage) is the API's most frequent call, and each round
// trip to PostgreSQL costs both sides a system call and a wake-up. apiMiddleware reads the
// key and the polled message in one statement (store.PrincipalWithMessage) and puts the
// message on the request context; GetMessage takes it from there instead of reading it again.
// Nothing else changes: the key is checked first (a revoked key gets 401 and never sees the
// message), then the request is validated, then the handler decides what to show. Only a live
// key reads ahead (test and demo keys read their test sends). A poll of a message the account
// does not have, or with an unknown key, costs one statement more than before: the read-ahead
// finds no row and the key is read alone (then GetMessage reads again and answers 404, or the
// key gets its 401).

// aheadMessageID is the message GetMessage will read for this route: its id path parameter,
// or 0 when the route is another operation or the id is not a positive integer (validation
// then answers).
func aheadMessageID(route *routers.Route, pathParams map[string]string) int64 {
	if route == nil || route.Operation == nil || route.Operation.OperationID != "getMessage" {
		return 0
	}
	id, err := strconv.ParseInt(pathParams["id"], 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// messageAhead returns the account's message id when it was read ahead with the request's
// key, nil otherwise.
func messageAhead(ctx context.Context, accountID, id int64) *store.Message {
	r, ok := apiRequestFrom(ctx)
	if !ok || r.ahead == nil || r.ahead.AccountID != accountID || r.ahead.ID != id {
		return nil
	}
	return r.ahead
}
