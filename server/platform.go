package server

import (
	"context"

	"gateway/platform/whatsapp"
)

// Platform is what the server needs of the messaging platform (Meta's Cloud API); the
// whatsapp.Client implements it.
type Platform interface {
	SendTemplate(ctx context.Context, token, phoneNumberID string, m whatsapp.TemplateSend) (whatsapp.SendResult, error)
	SendText(ctx context.Context, token, phoneNumberID, to, body string) (whatsapp.SendResult, error)
	ListTemplates(ctx context.Context, token, wabaID string) ([]whatsapp.Template, error)
	SendMessage(ctx context.Context, token, phoneNumberID string, m whatsapp.Message) (whatsapp.SendResult, error)
	MarkRead(ctx context.Context, token, phoneNumberID, messageID string, typing bool) error
}
