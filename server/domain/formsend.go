package domain

import (
	"context"
	"encoding/json"

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

// Sender sends from the dashboard's form (FormSends; the process wiring hands it to the
// dashboard).
type Sender interface {
	SendFromForm(ctx context.Context, accountID int64, in FormSend) (FormSent, error)
}

// FormSends is the dashboard form's send: the live template send (SendTemplate: the same
// template and variable checks, blocked contacts refused, the same records and events) with
// source "panel", and the form's key made when it was shown kept as an idempotency record like
// the API's Idempotency-Key, so a double submit sends once. A refusal the person can act on is
// a *SendError with the API's code, message and broken rules (by the API's field paths).
type FormSends struct {
	Sends *Sends
	// Check turns the form into a send request to destination (the form's, as digits when it
	// could be read so), checked as the API checks a request body (package server: its schema
	// and CheckTemplateSend), with every broken rule.
	Check func(in FormSend, destination string) (TemplateSend, refusal.Fields)
}

// SendFromForm sends the form in for the account.
func (f FormSends) SendFromForm(ctx context.Context, accountID int64, in FormSend) (FormSent, error) {
	mobile, ok := NormalizeMobile(in.Destination)
	if !ok {
		mobile = in.Destination
	}
	req, fe := f.Check(in, mobile)
	if !ok {
		fe = append(fe.Without("destination"), refusal.One("destination",
			"enter the number in international format: 8 to 15 digits with the country code first")...)
	}
	if len(fe) > 0 {
		return FormSent{}, Invalid(fe)
	}
	req.AccountID, req.Source = accountID, "panel"
	return f.Sends.formOnce(ctx, accountID, "panel", in.IdempotencyKey, req,
		"This form was already submitted. Open the send page again to send another message.",
		func(held *HeldKey) (int64, error) {
			req.Key = held
			res, err := f.Sends.SendTemplate(ctx, req)
			return res.MessageID, err
		})
}

// What a form's idempotency record keeps: the sent message (FormSent), or the refusal a
// second submit shows again; the record's status is the API's 200 for a send and 409 for a
// refusal (a form's record is read only here: its key is "panel:"-scoped).
const (
	formSentStatus    = 200
	formRefusalStatus = 409
)

// formRefusal is a form's refusal as its idempotency record keeps it.
type formRefusal struct {
	Kind    ErrorKind `json:"kind"`
	Code    string    `json:"code"`
	Message string    `json:"message"`
}

// formRefusalOf is the refusal a form's record kept, shown again on a second submit.
func formRefusalOf(response []byte) *SendError {
	var r formRefusal
	if err := json.Unmarshal(response, &r); err != nil || r.Kind == 0 {
		return &SendError{Kind: KindConflict, Code: CodeIdempotencyConflict, Message: string(response)}
	}
	return &SendError{Kind: r.Kind, Code: r.Code, Message: r.Message}
}
