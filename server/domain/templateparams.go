package domain

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gateway/server/refusal"
	"gateway/store"
)

// The rules of a template send beyond its name (issue 9): what the
// request must give for the template's header, body and buttons, checked before any platform
// call, each broken rule a refusal.Field naming the field (dotted JSON paths, as the schema
// validator names them; a rule about one button also carries its index) and saying what the
// template expects. The API answers them as a 422, the dashboard shows them next to the form's
// inputs. Live and test sends both use sendParams; the Messenger (server/platform.go) turns
// the parameters into the platform's wire shape.

// The template button types, as the store keeps them (platform/whatsapp's names; a test in
// package server holds them equal), and the longest coupon code a COPY_CODE button takes.
const (
	ButtonURL        = "URL"
	ButtonQuickReply = "QUICK_REPLY"
	ButtonCopyCode   = "COPY_CODE"
	ButtonOTP        = "OTP"
	MaxCouponCode    = 15
)

// templateParams is what a send of a template carries besides its name and language.
type templateParams struct {
	header, body []string
	media        *MediaParam
	location     *LocationParam
	buttons      []ButtonParam
}

// sendParams checks the request against the template and returns the parameters to send, or a
// KindInvalid refusal listing every broken rule.
func sendParams(t store.Template, b TemplateSend) (templateParams, *SendError) {
	p := templateParams{header: b.HeaderVariables, body: b.BodyVariables}
	var fe refusal.Fields
	if len(t.Unsupported) > 0 {
		field := "template_name"
		if b.TemplateName == nil {
			field = "template_id"
		}
		fe.Add(field, fmt.Sprintf("the template %q has %s, which the API cannot send yet", t.Name, strings.Join(t.Unsupported, " and ")))
		return p, Invalid(fe)
	}
	checkUserID(t, b, &fe)
	checkHeader(t, b, &p, &fe)
	if len(p.body) != t.BodyParams {
		fe.Add("body_variables", fmt.Sprintf("the template's body takes %s, got %d", variables(t.BodyParams), len(p.body)))
	}
	checkButtons(t, b, &p, &fe)
	if len(fe) > 0 {
		return p, Invalid(fe)
	}
	return p, nil
}

// HeaderFormat is the template's header format as GET /templates lists it: NONE when there is
// no header.
func HeaderFormat(t store.Template) string {
	if t.HeaderFormat == "" {
		return "NONE"
	}
	return t.HeaderFormat
}

// HeaderTextParams is how many header_variables the template takes: only a TEXT header takes any.
func HeaderTextParams(t store.Template) int {
	if t.HeaderFormat != "TEXT" {
		return 0
	}
	return t.HeaderParams
}

// mediaHeaders maps a media header format to the header_media type it takes.
var mediaHeaders = map[string]string{"IMAGE": "image", "VIDEO": "video", "DOCUMENT": "document"}

func checkHeader(t store.Template, b TemplateSend, p *templateParams, fe *refusal.Fields) {
	hf := HeaderFormat(t)
	wantMedia, isMedia := mediaHeaders[hf]
	n := HeaderTextParams(t)
	// What the header takes, in the words every message about it uses.
	var is string
	switch {
	case isMedia:
		is = fmt.Sprintf("the template's header is %s %s: give header_media with type %s", article(hf), hf, wantMedia)
	case hf == "LOCATION":
		is = "the template's header is a LOCATION: give header_location"
	case hf == "TEXT" && n > 0:
		is = fmt.Sprintf("the template's header is TEXT with %s: give header_variables only", variables(n))
	case hf == "TEXT":
		is = "the template's header is TEXT without variables: it takes no header_variables, header_media or header_location"
	case hf == "NONE":
		is = "the template has no header: it takes no header_variables, header_media or header_location"
	default: // a format sync would have listed as unsupported
		is = fmt.Sprintf("the template's header is %s %s, which the API cannot fill yet", article(hf), hf)
		fe.Add("template_name", is)
	}

	switch {
	case hf == "TEXT" && n > 0 && len(p.header) != n:
		fe.Add("header_variables", fmt.Sprintf("the template's header takes %s, got %d", variables(n), len(p.header)))
	case hf != "TEXT" || n == 0:
		if len(p.header) > 0 {
			fe.Add("header_variables", is)
		}
	}
	if m := b.HeaderMedia; m != nil {
		switch {
		case !isMedia:
			fe.Add("header_media", is)
		case m.Type != wantMedia:
			fe.Add("header_media.type", fmt.Sprintf("%s, not %s", is, m.Type))
		}
		if (deref(m.Link) == "") == (deref(m.ID) == "") {
			fe.Add("header_media", "give exactly one of link and id")
		}
		if m.Filename != nil && m.Type != "document" {
			fe.Add("header_media.filename", "filename is for a document header only")
		}
		p.media = &MediaParam{Type: m.Type, Link: deref(m.Link), ID: deref(m.ID), Filename: deref(m.Filename)}
	} else if isMedia {
		fe.Add("header_media", is)
	}
	if l := b.HeaderLocation; l != nil {
		if hf != "LOCATION" {
			fe.Add("header_location", is)
		}
		p.location = &LocationParam{Latitude: l.Latitude, Longitude: l.Longitude, Name: deref(l.Name), Address: deref(l.Address)}
	} else if hf == "LOCATION" {
		fe.Add("header_location", is)
	}
}

// article is "an" before a vowel sound, else "a".
func article(word string) string {
	if strings.ContainsRune("AEIOU", rune(word[0])) {
		return "an"
	}
	return "a"
}

// checkUserID refuses a send to a user id of a template with an authentication code button
// (copy code, one tap or zero tap, all kept as OTP): the platform sends those to a phone
// number only.
func checkUserID(t store.Template, b TemplateSend, fe *refusal.Fields) {
	if b.UserID == "" {
		return
	}
	for _, bt := range t.Buttons {
		if bt.Type == ButtonOTP {
			fe.Add("user_id", fmt.Sprintf("the template %q is an authentication template with a code button (copy code, one tap or zero tap), "+
				"which the platform sends only to a phone number: give destination instead of user_id", t.Name))
			return
		}
	}
}

// valueRequired: a button of this type must be given a value (QUICK_REPLY's payload is optional).
func valueRequired(bt store.TemplateButton) bool {
	return bt.TakesValue && bt.Type != ButtonQuickReply
}

// buttonValueName says what a button's value is, for messages.
func buttonValueName(bt store.TemplateButton) string {
	switch bt.Type {
	case ButtonURL:
		return "the URL suffix for {{1}}"
	case ButtonCopyCode:
		return "the coupon code"
	case ButtonOTP:
		return "the one-time password"
	case ButtonQuickReply:
		return "the payload"
	}
	return "a value"
}

func describeButton(bt store.TemplateButton) string {
	return fmt.Sprintf("button %d (%s %q)", bt.Index, bt.Type, bt.Text)
}

func checkButtons(t store.Template, b TemplateSend, p *templateParams, fe *refusal.Fields) {
	given := map[int]bool{}
	for i, bv := range b.ButtonVariables {
		field := "button_variables." + strconv.Itoa(i)
		if bv.Index >= len(t.Buttons) {
			fe.AddButton(field+".index", bv.Index, fmt.Sprintf("the template has %s; there is no button %d", buttonCount(len(t.Buttons)), bv.Index))
			continue
		}
		if given[bv.Index] {
			fe.AddButton(field+".index", bv.Index, fmt.Sprintf("button %d is given more than once", bv.Index))
			continue
		}
		given[bv.Index] = true
		bt := t.Buttons[bv.Index]
		if !bt.TakesValue {
			fe.AddButton(field, bt.Index, fmt.Sprintf("the template's %s takes no value", describeButton(bt)))
			continue
		}
		if n := utf8.RuneCountInString(bv.Value); bt.Type == ButtonCopyCode && n > MaxCouponCode {
			fe.AddButton(field+".value", bt.Index, fmt.Sprintf("the template's %s takes a coupon code of at most %d characters, got %d",
				describeButton(bt), MaxCouponCode, n))
			continue
		}
		p.buttons = append(p.buttons, ButtonParam{Index: bv.Index, Type: bt.Type, Value: bv.Value})
	}
	for _, bt := range t.Buttons {
		if given[bt.Index] || !valueRequired(bt) {
			continue
		}
		// A one-time-password template's code button carries the code of the body (reference §10).
		if bt.Type == ButtonOTP && len(p.body) > 0 {
			p.buttons = append(p.buttons, ButtonParam{Index: bt.Index, Type: bt.Type, Value: p.body[0]})
			continue
		}
		fe.AddButton("button_variables", bt.Index, fmt.Sprintf("the template's %s needs a value in button_variables: %s",
			describeButton(bt), buttonValueName(bt)))
	}
	// Meta's order: buttons by index.
	slices.SortFunc(p.buttons, func(x, y ButtonParam) int { return cmp.Compare(x.Index, y.Index) })
}

func buttonCount(n int) string {
	switch n {
	case 0:
		return "no buttons"
	case 1:
		return "1 button (index 0)"
	}
	return fmt.Sprintf("%d buttons (indexes 0 to %d)", n, n-1)
}

// renderedNote is the text a test send renders to, for its note: the body with the variables
// filled in, and the value each button carries.
func renderedNote(t store.Template, p templateParams) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Rendered: %q", renderFixture(t, p.body))
	for _, bp := range p.buttons {
		fmt.Fprintf(&sb, "; %s carries %q", describeButton(t.Buttons[bp.Index]), bp.Value)
	}
	sb.WriteString(".")
	return sb.String()
}

func variables(n int) string {
	if n == 1 {
		return "1 variable"
	}
	return strconv.Itoa(n) + " variables"
}
