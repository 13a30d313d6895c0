package whatsapp

import (
	"fmt"
	"strconv"
	"strings"
)

// This file is the template's two shapes that go beyond text: what a definition says a send
// needs (SendButtons, Unsupported) and the wire shape of the send components (reference §1
// and §10). The rules that decide what a caller must give live with the caller.

// Button types a send fills, as SendButton.Type and ButtonParam.Type name them.
const (
	ButtonURL        = "URL"         // a URL button with a {{1}} suffix: sub_type url, a text parameter
	ButtonQuickReply = "QUICK_REPLY" // sub_type quick_reply, a payload parameter
	ButtonCopyCode   = "COPY_CODE"   // sub_type copy_code, a coupon_code parameter
	ButtonOTP        = "OTP"         // an AUTHENTICATION template's code button: sub_type url, a text parameter
)

// MaxCouponCode is the longest coupon code a COPY_CODE button takes.
const MaxCouponCode = 15

// SendButton is one button of a template definition as a send sees it.
type SendButton struct {
	Index int    `json:"index"` // 0-based position among the template's buttons
	Type  string `json:"type"`  // upper case; OTP for an AUTHENTICATION template's code button
	Text  string `json:"text"`
	// TakesValue: a send may give the button a parameter (URL with {{1}}, COPY_CODE, OTP,
	// QUICK_REPLY's payload).
	TakesValue bool `json:"takes_value"`
}

// SendButtons returns the template's buttons in order. The copy-code or one-tap button of an
// AUTHENTICATION template, which the platform lists as type URL or OTP, is returned as OTP.
// It returns nil when the template has no buttons.
func (t Template) SendButtons() []SendButton {
	auth := strings.EqualFold(strings.TrimSpace(t.Category), "AUTHENTICATION")
	var out []SendButton
	for _, c := range t.Components {
		if !strings.EqualFold(c.Type, "BUTTONS") {
			continue
		}
		for _, b := range c.Buttons {
			sb := SendButton{Index: len(out), Type: strings.ToUpper(strings.TrimSpace(b.Type)), Text: b.Text}
			switch {
			case auth && (sb.Type == ButtonURL || sb.Type == ButtonOTP):
				sb.Type, sb.TakesValue = ButtonOTP, true
			case sb.Type == ButtonURL:
				sb.TakesValue = placeholderRE.MatchString(b.URL)
			case sb.Type == ButtonQuickReply, sb.Type == ButtonCopyCode:
				sb.TakesValue = true
			}
			out = append(out, sb)
		}
	}
	return out
}

// sendableHeaders are the header formats a send can fill; sendableButtons the button types.
var (
	sendableHeaders = map[string]bool{"": true, "TEXT": true, "IMAGE": true, "VIDEO": true, "DOCUMENT": true, "LOCATION": true}
	sendableButtons = map[string]bool{ButtonURL: true, ButtonQuickReply: true, ButtonCopyCode: true, ButtonOTP: true,
		"PHONE_NUMBER": true, "VOICE_CALL": true}
	knownComponents = map[string]bool{"HEADER": true, "BODY": true, "FOOTER": true, "BUTTONS": true}
)

// Unsupported names what the template has that this client cannot fill at send time: a header
// format ("GIF header", "PRODUCT header"), a component ("CAROUSEL", "LIMITED_TIME_OFFER") or a
// button type ("FLOW button", "CATALOG button"), each once, in definition order. It returns nil
// when the template can be sent.
func (t Template) Unsupported() []string {
	var out []string
	add := func(s string) {
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	if f := t.HeaderFormat(); !sendableHeaders[f] {
		add(f + " header")
	}
	for _, c := range t.Components {
		if ct := strings.ToUpper(strings.TrimSpace(c.Type)); !knownComponents[ct] && ct != "" {
			add(ct)
		}
	}
	for _, b := range t.SendButtons() {
		if !sendableButtons[b.Type] {
			add(b.Type + " button")
		}
	}
	return out
}

// HeaderMedia is the media of an IMAGE, VIDEO or DOCUMENT header: exactly one of Link and ID.
type HeaderMedia struct {
	Type     string // image, video or document
	Link     string // https URL
	ID       string // the platform's media id
	Filename string // document only
}

// HeaderLocation is the place of a LOCATION header.
type HeaderLocation struct {
	Latitude, Longitude float64
	Name, Address       string
}

// ButtonParam is the parameter of one button: Type (ButtonURL, ButtonQuickReply, ButtonCopyCode
// or ButtonOTP) decides the sub_type and the parameter's shape.
type ButtonParam struct {
	Index int    `json:"index"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// templateComponent is one component of a send (lower-case type; buttons carry sub_type and
// index).
type templateComponent struct {
	Type       string      `json:"type"`
	SubType    string      `json:"sub_type,omitempty"`
	Index      string      `json:"index,omitempty"`
	Parameters []parameter `json:"parameters"`
}

// parameter is one send parameter; exactly the field its type names is set.
type parameter struct {
	Type          string          `json:"type"`
	ParameterName string          `json:"parameter_name,omitempty"`
	Text          *string         `json:"text,omitempty"`
	Payload       *string         `json:"payload,omitempty"`
	CouponCode    *string         `json:"coupon_code,omitempty"`
	Image         *mediaObject    `json:"image,omitempty"`
	Video         *mediaObject    `json:"video,omitempty"`
	Document      *mediaObject    `json:"document,omitempty"`
	Location      *locationObject `json:"location,omitempty"`
}

type mediaObject struct {
	ID       string `json:"id,omitempty"`
	Link     string `json:"link,omitempty"`
	Filename string `json:"filename,omitempty"`
}

type locationObject struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

// templateComponents builds the components of a send in Meta's order: header, body, buttons
// by index. It fails with ErrInvalidArgument for a media header without exactly one of link
// and id, an unknown media or button type, a filename on a non-document, or mismatched
// parameter names.
func templateComponents(m TemplateSend) ([]templateComponent, error) {
	var comps []templateComponent
	header, err := headerComponent(m)
	if err != nil {
		return nil, err
	}
	if header != nil {
		comps = append(comps, *header)
	}
	if len(m.BodyParams) > 0 {
		p, err := textParameters("body", m.BodyParams, m.BodyParamNames)
		if err != nil {
			return nil, err
		}
		comps = append(comps, templateComponent{Type: "body", Parameters: p})
	}
	for _, b := range m.Buttons {
		c, err := buttonComponent(b)
		if err != nil {
			return nil, err
		}
		comps = append(comps, c)
	}
	return comps, nil
}

func headerComponent(m TemplateSend) (*templateComponent, error) {
	n := 0
	for _, given := range []bool{len(m.HeaderParams) > 0, m.HeaderMedia != nil, m.HeaderLocation != nil} {
		if given {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, fmt.Errorf("%w: a header takes text parameters, media or a location, not several", ErrInvalidArgument)
	case len(m.HeaderParams) > 0:
		p, err := textParameters("header", m.HeaderParams, m.HeaderParamNames)
		if err != nil {
			return nil, err
		}
		return &templateComponent{Type: "header", Parameters: p}, nil
	case m.HeaderMedia != nil:
		hm := m.HeaderMedia
		if (hm.Link == "") == (hm.ID == "") {
			return nil, fmt.Errorf("%w: header media needs exactly one of link and id", ErrInvalidArgument)
		}
		obj := &mediaObject{ID: hm.ID, Link: hm.Link, Filename: hm.Filename}
		p := parameter{Type: hm.Type}
		switch hm.Type {
		case "image":
			p.Image = obj
		case "video":
			p.Video = obj
		case "document":
			p.Document = obj
		default:
			return nil, fmt.Errorf("%w: header media type %q", ErrInvalidArgument, hm.Type)
		}
		if hm.Filename != "" && hm.Type != "document" {
			return nil, fmt.Errorf("%w: a filename is for a document header only", ErrInvalidArgument)
		}
		return &templateComponent{Type: "header", Parameters: []parameter{p}}, nil
	case m.HeaderLocation != nil:
		l := m.HeaderLocation
		return &templateComponent{Type: "header", Parameters: []parameter{{Type: "location",
			Location: &locationObject{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}}}}, nil
	}
	return nil, nil
}

func buttonComponent(b ButtonParam) (templateComponent, error) {
	v := b.Value
	c := templateComponent{Type: "button", Index: strconv.Itoa(b.Index)}
	switch b.Type {
	case ButtonURL, ButtonOTP:
		c.SubType, c.Parameters = "url", []parameter{{Type: "text", Text: &v}}
	case ButtonQuickReply:
		c.SubType, c.Parameters = "quick_reply", []parameter{{Type: "payload", Payload: &v}}
	case ButtonCopyCode:
		c.SubType, c.Parameters = "copy_code", []parameter{{Type: "coupon_code", CouponCode: &v}}
	default:
		return c, fmt.Errorf("%w: button %d of type %q takes no parameter", ErrInvalidArgument, b.Index, b.Type)
	}
	if b.Index < 0 {
		return c, fmt.Errorf("%w: button index %d", ErrInvalidArgument, b.Index)
	}
	return c, nil
}

// textParameters are the text parameters of a header or body, named for NAMED templates.
func textParameters(component string, values, names []string) ([]parameter, error) {
	if len(names) != 0 && len(names) != len(values) {
		return nil, fmt.Errorf("%w: %d %s parameter names for %d values", ErrInvalidArgument, len(names), component, len(values))
	}
	ps := make([]parameter, len(values))
	for i := range values {
		ps[i] = parameter{Type: "text", Text: &values[i]}
		if len(names) != 0 {
			if names[i] == "" {
				return nil, fmt.Errorf("%w: empty %s parameter name at %d", ErrInvalidArgument, component, i)
			}
			ps[i].ParameterName = names[i]
		}
	}
	return ps, nil
}
