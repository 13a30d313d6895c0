package server

import (
	"context"
	"errors"

	"gateway/gen"
)

// SendMessage sends a non-template message inside the customer's service window
// (POST /v1/messages in openapi/openapi.yaml).
func (a *api) SendMessage(ctx context.Context, req gen.SendMessageRequestObject) (gen.SendMessageResponseObject, error) {
	return nil, errors.New("not implemented yet")
}

// MarkMessageRead marks a received message read on the platform (POST /v1/messages/{id}/read).
func (a *api) MarkMessageRead(ctx context.Context, req gen.MarkMessageReadRequestObject) (gen.MarkMessageReadResponseObject, error) {
	return nil, errors.New("not implemented yet")
}
