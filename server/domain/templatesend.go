package domain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gateway/server/refusal"
	"gateway/store"
)

// TemplateSend is a request to send an approved template (the API's SendTemplateRequest, or
// the dashboard's form), already checked against the API's schema.
type TemplateSend struct {
	AccountID int64 `json:"-"`
	// Destination (a number) or UserID (a business-scoped user id, never read as a number)
	// names the recipient: exactly one of the two.
	Destination string `json:"destination,omitempty"`
	UserID      string `json:"user_id,omitempty"`
	// TemplateID or TemplateName names the template (at least one); Language picks among a
	// name's languages ("" for any).
	TemplateID      *int64           `json:"template_id,omitempty"`
	TemplateName    *string          `json:"template_name,omitempty"`
	Language        string           `json:"language,omitempty"`
	Name            string           `json:"name,omitempty"`          // the contact's name when the send creates the contact
	CampaignName    string           `json:"campaign_name,omitempty"` // "" is DefaultCampaign
	HeaderVariables []string         `json:"header_variables,omitempty"`
	BodyVariables   []string         `json:"body_variables,omitempty"`
	HeaderMedia     *HeaderMedia     `json:"header_media,omitempty"`
	HeaderLocation  *HeaderLocation  `json:"header_location,omitempty"`
	ButtonVariables []ButtonVariable `json:"button_variables,omitempty"`
	ClientReference *string          `json:"client_reference,omitempty"`
	Source          string           `json:"-"` // "api" or "panel"
	Key             *HeldKey         `json:"-"` // the Idempotency-Key the send holds; nil for none
}

// HeaderMedia is the media of an IMAGE, VIDEO or DOCUMENT header: exactly one of Link and
// ID. Its JSON is the API's header_media, as the message row keeps it.
type HeaderMedia struct {
	Filename *string `json:"filename,omitempty"`
	ID       *string `json:"id,omitempty"`
	Link     *string `json:"link,omitempty"`
	Type     string  `json:"type"` // image, video or document
}

// HeaderLocation is the place of a LOCATION header (the API's header_location).
type HeaderLocation struct {
	Address   *string `json:"address,omitempty"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      *string `json:"name,omitempty"`
}

// ButtonVariable is the value given for the template's button at Index.
type ButtonVariable struct {
	Index int    `json:"index"`
	Value string `json:"value"`
}

// SentMessage is what a template send did.
type SentMessage struct {
	Sent
	ClientReference *string
	// Test is set for a test-mode send: how it was delivered and what it rendered to.
	Test *TestDelivery
}

// TestDelivery is how a test-mode send went: simulated, or real through the sandbox number.
type TestDelivery struct {
	Real bool
	Note string
}

// TemplatePayload is a template message as the platform receives it; ToUserID is the
// recipient's business-scoped user id when it is sent to one (then it has no number).
type TemplatePayload struct {
	ToUserID                 string
	Name, Language           string
	HeaderParams, BodyParams []string
	// HeaderParamNames and BodyParamNames are a NAMED template's placeholder names, in order.
	HeaderParamNames, BodyParamNames []string
	HeaderMedia                      *MediaParam
	HeaderLocation                   *LocationParam
	Buttons                          []ButtonParam // by index
}

// MessageType is "template".
func (TemplatePayload) MessageType() string { return "template" }

// MediaParam is a media header's parameter.
type MediaParam struct{ Type, Link, ID, Filename string }

// LocationParam is a location header's parameter.
type LocationParam struct {
	Latitude, Longitude float64
	Name, Address       string
}

// ButtonParam is the parameter of one button: Type is the template's button type.
type ButtonParam struct {
	Index int    `json:"index"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// sentContent is what the message row keeps of a template send; UserID is the user id it went
// to (the message.sent event reads it there, as for an answer).
type sentContent struct {
	UserID          string          `json:"user_id,omitempty"`
	Language        string          `json:"language"`
	HeaderVariables []string        `json:"header_variables"`
	BodyVariables   []string        `json:"body_variables"`
	HeaderMedia     *HeaderMedia    `json:"header_media,omitempty"`
	HeaderLocation  *HeaderLocation `json:"header_location,omitempty"`
	Buttons         []ButtonParam   `json:"buttons,omitempty"`
}

// CheckTemplateSend is what the API's schema cannot say of a template send: one of
// template_name or template_id, and one recipient (checkRecipient).
func CheckTemplateSend(in TemplateSend) refusal.Fields {
	var fe refusal.Fields
	if in.TemplateName == nil && in.TemplateID == nil {
		fe.Add("template_name", "one of template_name or template_id is required")
	}
	checkRecipient(in.Destination, in.UserID, &fe)
	return fe
}

// checkRecipient is the rule of every send's recipient: exactly one of destination (a number
// that starts with its country code) and user_id.
func checkRecipient(destination, userID string, fe *refusal.Fields) {
	switch {
	case destination != "" && userID != "":
		fe.Add("user_id", "give destination or user_id, not both")
	case destination == "" && userID == "":
		fe.Add("destination", "required unless user_id is given")
	case strings.HasPrefix(destination, "0"):
		fe.Add("destination", "must start with the country code, not 0")
	}
}

// SendTemplate is a live send of an approved template: the template and its parameters
// checked (templateparams.go), then the pipeline (Deliver). It counts the send. in passed
// CheckTemplateSend.
func (s *Sends) SendTemplate(ctx context.Context, in TemplateSend) (SentMessage, error) {
	sent, err := s.sendTemplate(ctx, in)
	if counted(err) {
		s.observe(ModeLive, err)
	}
	return sent, err
}

func (s *Sends) sendTemplate(ctx context.Context, in TemplateSend) (SentMessage, error) {
	// The number and the candidate templates, in one statement.
	conn, candidates, err := s.cfg.Store.SendTarget(ctx, in.AccountID, deref(in.TemplateID), deref(in.TemplateName), in.Language)
	if errors.Is(err, store.ErrNotFound) {
		return SentMessage{}, errNotConnected()
	}
	if err != nil {
		return SentMessage{}, err
	}
	tpl, fail := resolveTemplate(candidates, in)
	if fail != nil {
		return SentMessage{}, fail
	}
	params, fail := sendParams(tpl, in)
	if fail != nil {
		return SentMessage{}, fail
	}
	payload := TemplatePayload{ToUserID: in.UserID, Name: tpl.Name, Language: tpl.Language, HeaderParams: params.header, BodyParams: params.body,
		HeaderMedia: params.media, HeaderLocation: params.location, Buttons: params.buttons}
	if s.cfg.Messenger == nil {
		return SentMessage{}, errors.New("no messaging platform configured")
	}
	if tpl.ParameterFormat == "NAMED" {
		if payload.HeaderParamNames, payload.BodyParamNames, err = s.cfg.Messenger.ParamNames(tpl.Components); err != nil {
			return SentMessage{}, fmt.Errorf("template %d components: %w", tpl.ID, err)
		}
	}
	content, err := json.Marshal(sentContent{UserID: in.UserID, Language: tpl.Language, HeaderVariables: orEmpty(params.header), BodyVariables: orEmpty(params.body),
		HeaderMedia: in.HeaderMedia, HeaderLocation: in.HeaderLocation, Buttons: params.buttons})
	if err != nil {
		return SentMessage{}, err
	}
	sent, err := s.Deliver(ctx, Outgoing{AccountID: in.AccountID, From: conn, Destination: in.Destination, UserID: in.UserID, Name: in.Name,
		Campaign: in.CampaignName, Payload: payload, TemplateID: tpl.ID, TemplateName: tpl.Name, Content: content,
		ClientReference: deref(in.ClientReference), Key: in.Key, Source: in.Source})
	if err != nil {
		return SentMessage{}, err
	}
	return SentMessage{Sent: sent, ClientReference: in.ClientReference}, nil
}

// resolveTemplate picks the approved template a live send names among the candidates
// store.SendTarget found: by id (any status; only approved ones may be sent), or by name (and
// language).
func resolveTemplate(candidates []store.Template, in TemplateSend) (store.Template, *SendError) {
	if in.TemplateID != nil {
		if len(candidates) != 1 || candidates[0].Status != store.TemplateApproved {
			return store.Template{}, templateNotFound(fmt.Sprintf("No approved template with id %d", *in.TemplateID))
		}
		return candidates[0], agrees(candidates[0], in.TemplateName, in.Language)
	}
	return pickByName(candidates, *in.TemplateName, in.Language)
}

// agrees checks that the template_name and language sent with a template_id name that template.
func agrees(t store.Template, name *string, lang string) *SendError {
	var fe refusal.Fields
	if name != nil && *name != t.Name {
		fe.Add("template_name", fmt.Sprintf("template_id %d is the template %q, not %q", t.ID, t.Name, *name))
	}
	if lang != "" && lang != t.Language {
		fe.Add("language", fmt.Sprintf("template_id %d is in %s, not %s", t.ID, t.Language, lang))
	}
	if len(fe) == 0 {
		return nil
	}
	return Invalid(fe)
}

// pickByName chooses among the approved templates with the requested name (already filtered by
// language when one was given).
func pickByName(ts []store.Template, name, lang string) (store.Template, *SendError) {
	switch {
	case len(ts) == 1:
		return ts[0], nil
	case len(ts) == 0 && lang != "":
		return store.Template{}, templateNotFound(fmt.Sprintf("No approved template named %q in language %s", name, lang))
	case len(ts) == 0:
		return store.Template{}, templateNotFound(fmt.Sprintf("No approved template named %q", name))
	}
	langs := make([]string, len(ts))
	for i, t := range ts {
		langs[i] = t.Language
	}
	var fe refusal.Fields
	fe.Add("language", fmt.Sprintf("the template %q is approved in several languages (%s); say which one", name, strings.Join(langs, ", ")))
	return store.Template{}, Invalid(fe)
}

// orEmpty keeps a missing list as [] in stored JSON.
func orEmpty(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
