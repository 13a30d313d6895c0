package domain

import "context"

// PanelAnswer is a text answer typed on a contact's page of the dashboard: the same answer as
// the API's POST /v1/messages (source "panel"), to the contact's number, or to its user id when
// it has no number.
type PanelAnswer struct {
	Destination, UserID string
	Body                string
	IdempotencyKey      string // made when the page was shown: a double submit sends once
}

// Answerer answers from a contact's page through the API's answer path (the process wiring
// hands it to the dashboard). A refusal the person can act on (the window closed, the contact
// blocked, a blank text) carries the API's code and message.
type Answerer interface {
	AnswerFromPanel(ctx context.Context, accountID int64, in PanelAnswer) (FormSent, error)
}
