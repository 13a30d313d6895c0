package whatsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// TemplateSend is one template message to send.
type TemplateSend struct {
	To           string   // recipient: digits, optionally with a leading "+"; sent as "+<digits>"
	ToUserID     string   // or the recipient's business-scoped user id (exactly one of To and ToUserID)
	Name         string   // template name
	Language     string   // locale the template was approved in, e.g. "en_US"
	HeaderParams []string // text header variables in order; omitted when empty
	BodyParams   []string // body variables in order; omitted when empty
	CallbackData string   // biz_opaque_callback_data, echoed in status webhooks; omitted when empty

	// HeaderParamNames and BodyParamNames are for templates with parameter_format
	// NAMED: when set they must have the same length as HeaderParams/BodyParams and
	// each text parameter is sent with its "parameter_name". Leave them nil for
	// positional templates.
	HeaderParamNames []string
	BodyParamNames   []string

	// A media or location header instead of HeaderParams (at most one of the three), and the
	// button parameters, sent after the body in the order given.
	HeaderMedia    *HeaderMedia
	HeaderLocation *HeaderLocation
	Buttons        []ButtonParam
}

// SendResult is the platform's answer to an accepted send.
type SendResult struct {
	MessageID     string // WhatsApp message id (wamid), opaque
	WaID          string // WhatsApp's id for the recipient; may differ from the number sent; "" when sent to a user id whose number is not shared
	UserID        string // the recipient's business-scoped user id, when the platform returns it
	Input         string // the "to" (or "recipient") value as the platform echoed it
	MessageStatus string // "accepted", "held_for_quality_assessment", "paused", or "" for text sends
}

type sendRequest struct {
	MessagingProduct      string              `json:"messaging_product"`
	RecipientType         string              `json:"recipient_type"`
	To                    string              `json:"to,omitempty"`
	Recipient             string              `json:"recipient,omitempty"` // a business-scoped user id, instead of "to"
	Context               *sessionContext     `json:"context,omitempty"`
	Type                  string              `json:"type"`
	Template              *templatePayload    `json:"template,omitempty"`
	Text                  *textPayload        `json:"text,omitempty"`
	Image                 *mediaPayload       `json:"image,omitempty"`
	Video                 *mediaPayload       `json:"video,omitempty"`
	Audio                 *mediaPayload       `json:"audio,omitempty"`
	Document              *mediaPayload       `json:"document,omitempty"`
	Sticker               *mediaPayload       `json:"sticker,omitempty"`
	Location              *locationPayload    `json:"location,omitempty"`
	Contacts              []ContactCard       `json:"contacts,omitempty"`
	Reaction              *reactionPayload    `json:"reaction,omitempty"`
	Interactive           *interactivePayload `json:"interactive,omitempty"`
	BizOpaqueCallbackData string              `json:"biz_opaque_callback_data,omitempty"`
}

type templatePayload struct {
	Name       string              `json:"name"`
	Language   templateLanguage    `json:"language"`
	Components []templateComponent `json:"components,omitempty"`
}

type templateLanguage struct {
	Code   string `json:"code"`
	Policy string `json:"policy"`
}

type textPayload struct {
	PreviewURL bool   `json:"preview_url"`
	Body       string `json:"body"`
}

type sendResponse struct {
	Contacts []struct {
		Input  string `json:"input"`
		WaID   string `json:"wa_id"`
		UserID string `json:"user_id"`
	} `json:"contacts"`
	Messages []struct {
		ID            string `json:"id"`
		MessageStatus string `json:"message_status"`
	} `json:"messages"`
}

// SendTemplate sends template message m from phoneNumberID with token.
// On failure it returns an error wrapping ErrInvalidArgument (nothing was sent),
// a *Error (the platform refused; use errors.As), an error wrapping ErrUnavailable
// (outcome unknown; IsTimeout tells a deadline), or one wrapping ErrMalformedResponse.
//
// A template with an authentication code button (ButtonOTP: copy-code, one-tap or zero-tap)
// cannot go to a user id: the platform needs the number.
func (c *Client) SendTemplate(ctx context.Context, token, phoneNumberID string, m TemplateSend) (SendResult, error) {
	to, userID, err := recipientOf(m.To, m.ToUserID)
	if err != nil {
		return SendResult{}, err
	}
	if userID != "" {
		for _, b := range m.Buttons {
			if b.Type == ButtonOTP {
				return SendResult{}, fmt.Errorf("%w: authentication templates with a code button need a phone number, not a user id", ErrInvalidArgument)
			}
		}
	}
	if err := checkID("template name", m.Name); err != nil {
		return SendResult{}, err
	}
	if err := checkID("template language", m.Language); err != nil {
		return SendResult{}, err
	}
	comps, err := templateComponents(m)
	if err != nil {
		return SendResult{}, err
	}
	return c.send(ctx, token, phoneNumberID, sendRequest{
		MessagingProduct: "whatsapp",
		RecipientType:    "individual",
		To:               to,
		Recipient:        userID,
		Type:             "template",
		Template: &templatePayload{
			Name:       m.Name,
			Language:   templateLanguage{Code: m.Language, Policy: "deterministic"},
			Components: comps,
		},
		BizOpaqueCallbackData: m.CallbackData,
	})
}

// SendText sends a free-form text message (only allowed inside the 24 h
// customer-service window; outside it the platform answers 131047, usually as a
// failed status webhook). to is digits with an optional leading "+".
// Errors are as for SendTemplate.
func (c *Client) SendText(ctx context.Context, token, phoneNumberID, to, body string) (SendResult, error) {
	to, err := recipient(to)
	if err != nil {
		return SendResult{}, err
	}
	if body == "" {
		return SendResult{}, fmt.Errorf("%w: empty text body", ErrInvalidArgument)
	}
	return c.send(ctx, token, phoneNumberID, sendRequest{
		MessagingProduct: "whatsapp",
		RecipientType:    "individual",
		To:               to,
		Type:             "text",
		Text:             &textPayload{PreviewURL: false, Body: body},
	})
}

func (c *Client) send(ctx context.Context, token, phoneNumberID string, req sendRequest) (SendResult, error) {
	if err := checkToken(token); err != nil {
		return SendResult{}, err
	}
	if err := checkID("phone number id", phoneNumberID); err != nil {
		return SendResult{}, err
	}
	u, err := c.endpoint(phoneNumberID, "messages")
	if err != nil {
		return SendResult{}, err
	}
	body, err := marshalRequest(req)
	if err != nil {
		return SendResult{}, fmt.Errorf("%w: encode request: %v", ErrInvalidArgument, err)
	}
	data, err := c.do(ctx, http.MethodPost, u, token, body)
	if err != nil {
		return SendResult{}, err
	}
	var resp sendResponse
	if err := lenientUnmarshal(data, &resp); err != nil {
		return SendResult{}, fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if len(resp.Messages) == 0 || resp.Messages[0].ID == "" {
		return SendResult{}, fmt.Errorf("%w: no message id in answer", ErrMalformedResponse)
	}
	res := SendResult{MessageID: resp.Messages[0].ID, MessageStatus: resp.Messages[0].MessageStatus}
	if len(resp.Contacts) > 0 {
		res.WaID, res.Input, res.UserID = resp.Contacts[0].WaID, resp.Contacts[0].Input, resp.Contacts[0].UserID
	}
	return res, nil
}

// marshalRequest encodes v without HTML escaping and without a trailing newline.
func marshalRequest(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// recipient turns "digits" or "+digits" into "+digits".
func recipient(to string) (string, error) {
	digits := strings.TrimPrefix(to, "+")
	if digits == "" {
		return "", fmt.Errorf("%w: empty recipient", ErrInvalidArgument)
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return "", fmt.Errorf("%w: recipient %q is not digits with an optional leading +", ErrInvalidArgument, to)
		}
	}
	return "+" + digits, nil
}
