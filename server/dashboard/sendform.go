package dashboard

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"gateway/platform/whatsapp"
	"gateway/store"
)

// The send form of one template: an input for each part the template takes (its header's
// text variables, media or location; its body variables; a value for each button that takes
// one), each with the refusal's reason about it, and the preview of the message with the
// values typed so far. A template without a media header shows no media inputs, and so on.

// fieldGroup is one part of the template (Header, Body, Buttons) and its inputs.
type fieldGroup struct {
	ID, Legend, Help string
	Error            string // the refusal's reason about the part as a whole
	Fields           []formField
}

// formField is one input of the send form.
type formField struct {
	ID, Name, Label, Value, Help, Error string
	Type                                string // hidden, or "" for text
	Required                            bool
	MaxLength                           int
	InputMode                           string
	input                               string // the input its reason is under (formRefusal): header.0, media_link, button_1, ...
}

// DescribedBy is the ids of the field's help and error, for aria-describedby.
func (f formField) DescribedBy() string {
	var ids []string
	if f.Help != "" {
		ids = append(ids, f.ID+"-help")
	}
	if f.Error != "" {
		ids = append(ids, f.ID+"-error")
	}
	return strings.Join(ids, " ")
}

// preview is the message as the recipient would see it with the form's values.
type preview struct {
	Header, Body, Footer string
	Buttons              []string
}

// templateComponents is what the send form, its preview and the templates page read of a
// template's components.
type templateComponents struct {
	Header, Body, Footer string
	Buttons              []struct {
		Type, Text, URL string
	}
}

func parseComponents(raw []byte) templateComponents {
	var cs []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Buttons []struct {
			Type string `json:"type"`
			Text string `json:"text"`
			URL  string `json:"url"`
		} `json:"buttons"`
	}
	json.Unmarshal(raw, &cs)
	var tc templateComponents
	for _, c := range cs {
		switch strings.ToUpper(c.Type) {
		case "HEADER":
			tc.Header = c.Text
		case "BODY":
			tc.Body = c.Text
		case "FOOTER":
			tc.Footer = c.Text
		case "BUTTONS":
			for _, b := range c.Buttons {
				tc.Buttons = append(tc.Buttons, struct{ Type, Text, URL string }{b.Type, b.Text, b.URL})
			}
		}
	}
	return tc
}

// fill is vs padded or cut to n values.
func fill(vs []string, n int) []string {
	out := make([]string, n)
	copy(out, vs)
	return out
}

// substitute fills {{1}}, {{2}}, ... of text with vals (those left empty stay as they are).
func substitute(text string, vals []string) string {
	for i, v := range vals {
		if v != "" {
			text = strings.ReplaceAll(text, "{{"+strconv.Itoa(i+1)+"}}", v)
		}
	}
	return text
}

// templateForm returns the inputs of t's parts with the values of form v and the reasons of
// errs (the refusal's Fields), and the preview of the message.
func templateForm(t store.Template, v url.Values, errs map[string]string) ([]fieldGroup, preview) {
	tc := parseComponents(t.Components)
	body := fill(v["body"], t.BodyParams)
	pv := preview{Body: substitute(tc.Body, body), Footer: tc.Footer}
	var groups []fieldGroup

	header := fieldGroup{ID: "s-header", Legend: "Header", Error: strings.Join(nonEmpty(errs["media"], errs["location"], errs["header"]), "; ")}
	switch f := t.HeaderFormat; f {
	case "TEXT":
		vals := fill(v["header"], t.HeaderParams)
		for i, val := range vals {
			header.Fields = append(header.Fields, formField{ID: fmt.Sprintf("s-header-%d", i), Name: "header", Value: val,
				Label: fmt.Sprintf("Header variable {{%d}}", i+1), Required: true, MaxLength: 1024, Error: errs[fmt.Sprintf("header.%d", i)],
				input: fmt.Sprintf("header.%d", i)})
		}
		pv.Header = substitute(tc.Header, vals)
	case "IMAGE", "VIDEO", "DOCUMENT":
		kind := strings.ToLower(f)
		article := "a"
		if f == "IMAGE" {
			article = "an"
		}
		header.Help = fmt.Sprintf("The template's header is %s %s: give a public https link to it or the id of media uploaded to the platform.",
			article, kind)
		header.Fields = append(header.Fields,
			formField{ID: "s-media-type", Name: "media_type", Value: kind, Type: "hidden"},
			formField{ID: "s-media-link", Name: "media_link", Value: v.Get("media_link"), Label: "Media link (https)",
				MaxLength: 2048, InputMode: "url", Error: errs["media_link"], input: "media_link"},
			formField{ID: "s-media-id", Name: "media_id", Value: v.Get("media_id"), Label: "or media id", MaxLength: 128,
				Error: errs["media_id"], input: "media_id"})
		if f == "DOCUMENT" {
			header.Fields = append(header.Fields, formField{ID: "s-media-filename", Name: "media_filename", Value: v.Get("media_filename"),
				Label: "File name the recipient sees (optional)", MaxLength: 240, Error: errs["media_filename"],
				input: "media_filename"})
		}
		src := "no media given yet"
		if l, id := v.Get("media_link"), v.Get("media_id"); l != "" {
			src = l
		} else if id != "" {
			src = "media id " + id
		}
		pv.Header = strings.ToUpper(kind[:1]) + kind[1:] + ": " + src
		if fn := v.Get("media_filename"); fn != "" && f == "DOCUMENT" {
			pv.Header += " (" + fn + ")"
		}
	case "LOCATION":
		header.Help = "The template's header is a location."
		for _, in := range []struct{ name, label, mode string }{{"latitude", "Latitude (-90 to 90)", "decimal"},
			{"longitude", "Longitude (-180 to 180)", "decimal"}, {"location_name", "Place name (optional)", ""},
			{"location_address", "Address (optional)", ""}} {
			header.Fields = append(header.Fields, formField{ID: "s-" + strings.ReplaceAll(in.name, "_", "-"), Name: in.name,
				Value: v.Get(in.name), Label: in.label, Required: in.mode != "", MaxLength: 1000, InputMode: in.mode, Error: errs[in.name],
				input: in.name})
		}
		pv.Header = "Location: " + strings.Join(nonEmpty(v.Get("location_name"), v.Get("location_address")), ", ")
		if lat, lng := v.Get("latitude"), v.Get("longitude"); lat != "" || lng != "" {
			pv.Header += " (" + lat + ", " + lng + ")"
		}
	}
	if len(header.Fields) > 0 || header.Error != "" {
		groups = append(groups, header)
	}

	bodyGroup := fieldGroup{ID: "s-body", Legend: "Body", Error: errs["body"]}
	for i, val := range body {
		bodyGroup.Fields = append(bodyGroup.Fields, formField{ID: fmt.Sprintf("s-body-%d", i), Name: "body", Value: val,
			Label: fmt.Sprintf("Body variable {{%d}}", i+1), Required: true, MaxLength: 1024, Error: errs[fmt.Sprintf("body.%d", i)],
			input: fmt.Sprintf("body.%d", i)})
	}
	if len(bodyGroup.Fields) > 0 || bodyGroup.Error != "" {
		groups = append(groups, bodyGroup)
	}

	buttons := fieldGroup{ID: "s-buttons", Legend: "Buttons", Error: errs["buttons"]}
	for _, bt := range t.Buttons {
		name := "button_" + strconv.Itoa(bt.Index)
		val, label := v.Get(name), buttonLabel(bt)
		var url string
		if bt.Index < len(tc.Buttons) {
			url = tc.Buttons[bt.Index].URL
		}
		f := formField{ID: "s-button-" + strconv.Itoa(bt.Index), Name: name, Value: val, MaxLength: 2000, Error: errs[name], input: name}
		switch bt.Type {
		case whatsapp.ButtonURL:
			f.Label, f.Required, f.Help = label+": URL suffix for {{1}}", true, url
			label += " → " + strings.ReplaceAll(url, "{{1}}", orDots(val))
		case whatsapp.ButtonQuickReply:
			f.Label, f.Help = label+": payload (optional)", "Sent back with the reply when the person taps the button."
			if val != "" {
				label += " (payload " + val + ")"
			}
		case whatsapp.ButtonCopyCode:
			f.Label, f.Required, f.MaxLength = label+": coupon code", true, whatsapp.MaxCouponCode
			label += ": " + orDots(val)
		case whatsapp.ButtonOTP:
			// Filled from body variable 1 as the API fills it (reference §10).
			buttons.Help = "The one-time password button carries body variable 1."
			code := ""
			if len(body) > 0 {
				code = body[0]
			}
			label += ": " + orDots(code)
			f = formField{}
		default:
			if url != "" {
				label += " → " + url
			}
			f = formField{}
		}
		pv.Buttons = append(pv.Buttons, label)
		if f.Name != "" && bt.TakesValue {
			buttons.Fields = append(buttons.Fields, f)
		}
	}
	if len(buttons.Fields) > 0 || buttons.Error != "" || buttons.Help != "" {
		groups = append(groups, buttons)
	}
	return groups, pv
}

// buttonLabel names a button for the form: its position and text.
func buttonLabel(bt store.TemplateButton) string {
	text := bt.Text
	if text == "" {
		text = strings.ToLower(strings.ReplaceAll(bt.Type, "_", " "))
	}
	return fmt.Sprintf("Button %d “%s”", bt.Index+1, text)
}

func orDots(s string) string {
	if s == "" {
		return "…"
	}
	return s
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
