package domain

import (
	"context"

	"gateway/server/refusal"
)

// FormSend is a send from the dashboard's form.
type FormSend struct {
	TemplateID      int64
	Destination     string
	Name            string // the contact's name when the number is new
	CampaignName    string // "" groups it under the standing API campaign
	BodyVariables   []string
	HeaderVariables []string
	HeaderMedia     *FormMedia     // nil when the form gave no media
	HeaderLocation  *FormLocation  // nil when the form gave no location
	ButtonValues    map[int]string // button index → the value typed for it
	IdempotencyKey  string         // made when the form was shown: a double submit sends once
}

// FormMedia is the form's media header (the API's header_media).
type FormMedia struct {
	Type               string // image, video or document: the chosen template's header format
	Link, ID, Filename string
}

// FormLocation is the form's location header (the API's header_location), as typed.
type FormLocation struct {
	Latitude, Longitude, Name, Address string
}

// FormSent is what a send from the form did.
type FormSent struct {
	MessageID int64 `json:"message_id"`
	Replayed  bool  `json:"-"` // the form had been submitted before; nothing was sent again
}

// SendRefused is a send the API's rules refused: Status and Message as the API answers them,
// and Fields the broken rules by the API's field paths (empty when the refusal is about no
// field, such as a blocked contact). The form shows each next to its input (formRefusal).
type SendRefused struct {
	Status  int
	Message string
	Fields  refusal.Fields
}

func (e *SendRefused) Error() string { return e.Message }

// Sender sends from the dashboard's form through the API's send path (implemented by the API's
// server.Server; the process wiring hands it to the dashboard).
type Sender interface {
	SendFromForm(ctx context.Context, accountID int64, in FormSend) (FormSent, error)
}
