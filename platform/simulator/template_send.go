package simulator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ---- send request ----

// sendRequest is the body of POST /{phone-number-id}/messages.
type sendRequest struct {
	MessagingProduct      *string       `json:"messaging_product"`
	RecipientType         string        `json:"recipient_type"`
	To                    *string       `json:"to"`
	Recipient             *string       `json:"recipient"` // a business-scoped user id, instead of to
	Status                string        `json:"status"`    // "read" marks message_id read
	MessageID             string        `json:"message_id"`
	Type                  *string       `json:"type"`
	Template              *sendTemplate `json:"template"`
	Text                  *sendText     `json:"text"`
	BizOpaqueCallbackData string        `json:"biz_opaque_callback_data"`
}

type sendText struct {
	Body       *string `json:"body"`
	PreviewURL bool    `json:"preview_url"`
}

type sendTemplate struct {
	Name       string          `json:"name"`
	Language   *sendLanguage   `json:"language"`
	Components []sendComponent `json:"components"`
}

type sendLanguage struct {
	Code   string `json:"code"`
	Policy string `json:"policy"`
}

type sendComponent struct {
	Type       string          `json:"type"`
	SubType    string          `json:"sub_type"`
	Index      json.RawMessage `json:"index"` // a string ("0") or, in Meta's own examples, a number
	Parameters []sendParameter `json:"parameters"`
}

type sendParameter struct {
	Type          string          `json:"type"`
	ParameterName string          `json:"parameter_name"`
	Text          *string         `json:"text"`
	Payload       *string         `json:"payload"`
	CouponCode    *string         `json:"coupon_code"`
	Currency      *fallback       `json:"currency"`
	DateTime      *fallback       `json:"date_time"`
	Image         *sendMedia      `json:"image"`
	Video         *sendMedia      `json:"video"`
	Document      *sendMedia      `json:"document"`
	Location      json.RawMessage `json:"location"`
	Action        json.RawMessage `json:"action"`
}

type fallback struct {
	FallbackValue string `json:"fallback_value"`
}

type sendMedia struct {
	ID   string `json:"id"`
	Link string `json:"link"`
}

// buttonIndex decodes a button component's index, given as "0" or 0.
func buttonIndex(raw json.RawMessage) (int, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, n >= 0
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil && n >= 0
}

// textProblem says what is wrong with a text parameter value, or "" when
// Meta would accept it.
func textProblem(s string) string {
	if strings.TrimSpace(s) == "" {
		return "Param text cannot be empty"
	}
	if strings.ContainsAny(s, "\n\t") || strings.Contains(s, "     ") {
		return "Param text cannot have new-line/tab characters or more than 4 consecutive spaces"
	}
	return ""
}

// validateTemplateSend checks the components of a template send against the
// definition, the way the Cloud API does, and returns the flattened
// parameters. The error is the Graph error to return.
func validateTemplateSend(sp templateSpec, comps []sendComponent) ([]SentParameter, *graphError) {
	var header, body *sendComponent
	var buttons []*sendComponent
	for i := range comps {
		c := &comps[i]
		switch strings.ToLower(c.Type) {
		case "header":
			if header != nil {
				return nil, paramError("Invalid parameter", "Duplicate component type: header")
			}
			header = c
		case "body":
			if body != nil {
				return nil, paramError("Invalid parameter", "Duplicate component type: body")
			}
			body = c
		case "button":
			buttons = append(buttons, c)
		case "":
			return nil, paramError("The parameter template['components'][0]['type'] is required.", "components: component type is required")
		default:
			return nil, paramError("Invalid parameter", fmt.Sprintf("components: invalid component type %q", c.Type))
		}
	}
	var out []SentParameter

	// Header.
	var headerParams []sendParameter
	if header != nil {
		headerParams = header.Parameters
	}
	switch sp.headerFormat {
	case "", "TEXT":
		vals, ge := checkTextComponent("header", sp.named, sp.headerVars, headerParams)
		if ge != nil {
			return nil, ge
		}
		if sp.headerText != "" && utf8.RuneCountInString(hydrate(sp.headerText, vals)) > maxHeaderChars {
			return nil, waError(132005, fmt.Sprintf("header: hydrated text is longer than %d characters", maxHeaderChars))
		}
		out = appendParams(out, "header", "", "", headerParams)
	default:
		if len(headerParams) == 0 {
			return nil, waError(132012, fmt.Sprintf("header: Format mismatch, expected %s, received UNKNOWN", sp.headerFormat))
		}
		if len(headerParams) != 1 {
			return nil, waError(132000, countDetails("header", len(headerParams), 1))
		}
		p := headerParams[0]
		want := mediaParamType(sp.headerFormat)
		if strings.ToLower(p.Type) != want {
			got := strings.ToUpper(p.Type)
			if got == "" {
				got = "UNKNOWN"
			}
			return nil, waError(132012, fmt.Sprintf("header: Format mismatch, expected %s, received %s", sp.headerFormat, got))
		}
		if want != "location" {
			m := mediaOf(p)
			if m == nil || (m.ID == "" && m.Link == "") {
				return nil, waError(131008, fmt.Sprintf("header: %s requires a link or an id", want))
			}
		} else if len(p.Location) == 0 {
			return nil, waError(131008, "header: location is required")
		}
		out = appendParams(out, "header", "", "", headerParams)
	}

	// Body.
	var bodyParams []sendParameter
	if body != nil {
		bodyParams = body.Parameters
	}
	vals, ge := checkTextComponent("body", sp.named, sp.bodyVars, bodyParams)
	if ge != nil {
		return nil, ge
	}
	if utf8.RuneCountInString(hydrate(sp.bodyText, vals)) > maxBodyChars {
		return nil, waError(132005, fmt.Sprintf("body: hydrated text is longer than %d characters", maxBodyChars))
	}
	out = appendParams(out, "body", "", "", bodyParams)

	// Buttons.
	seen := map[int]bool{}
	for _, b := range buttons {
		idx, ok := buttonIndex(b.Index)
		if !ok {
			return nil, waError(131008, "buttons: index is required for a button component")
		}
		if b.SubType == "" {
			return nil, waError(131008, fmt.Sprintf("buttons: sub_type is required for the button at index %d", idx))
		}
		if idx >= len(sp.buttons) {
			return nil, waError(131009, fmt.Sprintf("buttons: Button at index %d does not exist in the template", idx))
		}
		if seen[idx] {
			return nil, paramError("Invalid parameter", fmt.Sprintf("buttons: duplicate button at index %d", idx))
		}
		seen[idx] = true
		sub := strings.ToLower(b.SubType)
		if ge := checkButton(sp, idx, sub, b.Parameters); ge != nil {
			return nil, ge
		}
		out = appendParams(out, "button", sub, strconv.Itoa(idx), b.Parameters)
	}
	for i := range sp.buttons {
		if !seen[i] && buttonNeedsParam(sp, i) {
			return nil, waError(131008, fmt.Sprintf("buttons: Button at index %d of type %s requires a parameter", i, metaButtonType(sp.buttons[i])))
		}
	}
	return out, nil
}

// buttonSubTypes is the sub_type and parameter type a send uses for each button type that
// takes a parameter (reference §10).
var buttonSubTypes = map[string]struct{ sub, param string }{
	"URL":         {"url", "text"},
	"OTP":         {"url", "text"},
	"QUICK_REPLY": {"quick_reply", "payload"},
	"COPY_CODE":   {"copy_code", "coupon_code"},
}

// buttonNeedsParam: Meta refuses a send that gives no component for this button (131008).
func buttonNeedsParam(sp templateSpec, i int) bool {
	switch sp.buttons[i] {
	case "URL":
		return sp.urlVar[i]
	case "OTP", "COPY_CODE":
		return true
	}
	return false
}

// metaButtonType is a button type as Meta's error details write it: "Url", "Copy_code".
func metaButtonType(t string) string {
	if t == "OTP" {
		t = "URL"
	}
	return t[:1] + strings.ToLower(t[1:])
}

// checkButton validates one button component against the definition's button at idx: the
// sub_type must be the button's, and it takes its one parameter (optional for quick reply, none
// for a URL without a placeholder or a button type that takes none), else 132000.
func checkButton(sp templateSpec, idx int, sub string, params []sendParameter) *graphError {
	bt := sp.buttons[idx]
	want, takes := buttonSubTypes[bt]
	switch {
	case !takes:
		return waError(132000, fmt.Sprintf("buttons: Button at index %d of type %s does not take parameters", idx, metaButtonType(bt)))
	case sub != want.sub:
		return waError(132000, fmt.Sprintf("buttons: Button at index %d of type %s does not match sub_type %s", idx, metaButtonType(bt), sub))
	}
	expected := 1
	if (bt == "QUICK_REPLY" && len(params) == 0) || (bt == "URL" && !sp.urlVar[idx]) {
		expected = 0
	}
	if len(params) != expected {
		return waError(132000, countDetails(fmt.Sprintf("button at index %d", idx), len(params), expected))
	}
	for _, p := range params {
		var v *string
		switch strings.ToLower(p.Type) {
		case want.param:
			v = map[string]*string{"text": p.Text, "payload": p.Payload, "coupon_code": p.CouponCode}[want.param]
		}
		if v == nil {
			return waError(131008, fmt.Sprintf("buttons: Button at index %d of type %s requires a %s parameter", idx, metaButtonType(bt), want.param))
		}
		if want.param == "text" {
			if prob := textProblem(*v); prob != "" {
				return waError(132012, fmt.Sprintf("button at index %d: %s", idx, prob))
			}
		}
		if want.param == "coupon_code" && utf8.RuneCountInString(*v) > 15 {
			return waError(131009, fmt.Sprintf("buttons: coupon_code of the button at index %d is longer than 15 characters", idx))
		}
	}
	return nil
}

// checkTextComponent validates the parameters of a header (TEXT) or body
// component against the placeholders of the definition and returns the value
// for each placeholder (by position or by name).
func checkTextComponent(name string, named bool, vars []string, params []sendParameter) (map[string]string, *graphError) {
	if len(params) != len(vars) {
		return nil, waError(132000, countDetails(name, len(params), len(vars)))
	}
	vals := make(map[string]string, len(params))
	withName := 0
	for _, p := range params {
		if p.ParameterName != "" {
			withName++
		}
	}
	if withName != 0 && withName != len(params) {
		return nil, waError(132000, name+": positional and named parameters cannot be mixed in one component")
	}
	if named && withName != len(params) {
		return nil, waError(132000, name+": every parameter of a NAMED template needs a parameter_name")
	}
	if !named && withName != 0 {
		return nil, waError(132000, name+": parameter_name is not expected for a POSITIONAL template")
	}
	for i, p := range params {
		var v string
		switch strings.ToLower(p.Type) {
		case "text":
			if p.Text == nil {
				return nil, waError(132012, name+": Param text cannot be empty")
			}
			if prob := textProblem(*p.Text); prob != "" {
				return nil, waError(132012, name+": "+prob)
			}
			v = *p.Text
		case "currency", "date_time":
			f := p.Currency
			if strings.ToLower(p.Type) == "date_time" {
				f = p.DateTime
			}
			if f == nil || f.FallbackValue == "" {
				return nil, waError(131008, fmt.Sprintf("%s: %s parameter requires fallback_value", name, strings.ToLower(p.Type)))
			}
			v = f.FallbackValue
		case "":
			return nil, waError(131008, name+": parameter type is required")
		default:
			return nil, waError(132012, fmt.Sprintf("%s: Format mismatch, expected TEXT, received %s", name, strings.ToUpper(p.Type)))
		}
		key := strconv.Itoa(i + 1)
		if named {
			key = p.ParameterName
			if !slices.Contains(vars, key) {
				return nil, waError(132000, fmt.Sprintf("%s: parameter name (%s) does not match any expected param names", name, key))
			}
			if _, dup := vals[key]; dup {
				return nil, waError(132000, fmt.Sprintf("%s: parameter name (%s) is given more than once", name, key))
			}
		}
		vals[key] = v
	}
	return vals, nil
}

// countDetails is Meta's wording for a parameter-count mismatch.
func countDetails(component string, got, want int) string {
	return fmt.Sprintf("%s: number of localizable_params (%d) does not match the expected number of params (%d)", component, got, want)
}

// hydrate replaces the placeholders of text with vals (keyed by position
// "1", "2", ... or by name).
func hydrate(text string, vals map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(text, func(m string) string {
		k := placeholderRE.FindStringSubmatch(m)[1]
		if v, ok := vals[k]; ok {
			return v
		}
		return m
	})
}

// mediaParamType maps a HEADER format to the send parameter type it needs.
func mediaParamType(format string) string {
	switch format {
	case "GIF":
		return "video"
	default:
		return strings.ToLower(format)
	}
}

func mediaOf(p sendParameter) *sendMedia {
	switch strings.ToLower(p.Type) {
	case "image":
		return p.Image
	case "video":
		return p.Video
	case "document":
		return p.Document
	}
	return nil
}

// appendParams flattens params into SentParameter records.
func appendParams(out []SentParameter, component, subType, index string, params []sendParameter) []SentParameter {
	for _, p := range params {
		sp := SentParameter{Component: component, SubType: subType, Index: index, Type: strings.ToLower(p.Type), Name: p.ParameterName}
		switch {
		case p.Text != nil:
			sp.Value = *p.Text
		case p.Payload != nil:
			sp.Value = *p.Payload
		case p.CouponCode != nil:
			sp.Value = *p.CouponCode
		case p.Currency != nil:
			sp.Value = p.Currency.FallbackValue
		case p.DateTime != nil:
			sp.Value = p.DateTime.FallbackValue
		default:
			if m := mediaOf(p); m != nil {
				sp.Value = m.Link
				if sp.Value == "" {
					sp.Value = m.ID
				}
			} else if len(p.Location) > 0 {
				sp.Value = string(p.Location)
			} else if len(p.Action) > 0 {
				sp.Value = string(p.Action)
			}
		}
		out = append(out, sp)
	}
	return out
}
