package whatsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// templateFields are the fields ListTemplates asks for.
const templateFields = "id,name,language,status,category,components,parameter_format,rejected_reason"

// maxTemplatePages bounds ListTemplates against a platform that never stops paging.
const maxTemplatePages = 1000

// Template is one message template of a WhatsApp Business Account.
type Template struct {
	ID              string              `json:"id"` // a string in API answers; numbers are accepted too
	Name            string              `json:"name"`
	Language        string              `json:"language"`         // locale, e.g. "en_US"
	Status          string              `json:"status"`           // "APPROVED", "PENDING", "REJECTED", "PAUSED", "DISABLED", ...
	Category        string              `json:"category"`         // "MARKETING", "UTILITY", "AUTHENTICATION"
	ParameterFormat string              `json:"parameter_format"` // "POSITIONAL", "NAMED", or "" when the platform did not say
	Components      []TemplateComponent `json:"components"`
	// RejectedReason is why the platform rejected the template ("NONE" or "" otherwise).
	RejectedReason string `json:"rejected_reason,omitempty"`
}

// TemplateComponent is one component of a template definition.
type TemplateComponent struct {
	Type    string           `json:"type"`              // "HEADER", "BODY", "FOOTER", "BUTTONS", ...
	Format  string           `json:"format,omitempty"`  // header format: "TEXT", "IMAGE", "VIDEO", "DOCUMENT", "LOCATION", ...
	Text    string           `json:"text,omitempty"`    // text with {{1}} or {{name}} placeholders
	Buttons []TemplateButton `json:"buttons,omitempty"` // for BUTTONS components
	Raw     json.RawMessage  `json:"-"`                 // the component as the platform sent it
}

// TemplateButton is one button of a BUTTONS component.
type TemplateButton struct {
	Type string `json:"type"` // "QUICK_REPLY", "URL", "PHONE_NUMBER", "COPY_CODE", ...
	Text string `json:"text"`
	URL  string `json:"url,omitempty"` // for URL buttons; may contain {{1}}
}

// UnmarshalJSON decodes a template, accepting a numeric id. It fails only on
// malformed JSON; fields of an unexpected type are left empty.
func (t *Template) UnmarshalJSON(data []byte) error {
	type plain Template
	aux := struct {
		*plain
		ID flexString `json:"id"`
	}{plain: (*plain)(t)}
	if err := lenientUnmarshal(data, &aux); err != nil {
		return err
	}
	t.ID = string(aux.ID)
	return nil
}

// UnmarshalJSON decodes a component and keeps its raw JSON in Raw. It fails only on
// malformed JSON; fields of an unexpected type are left empty.
func (tc *TemplateComponent) UnmarshalJSON(data []byte) error {
	type plain TemplateComponent
	if err := lenientUnmarshal(data, (*plain)(tc)); err != nil {
		return err
	}
	tc.Raw = append(json.RawMessage(nil), data...)
	return nil
}

var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)

// placeholders returns the distinct placeholder names in text, in order of first appearance.
func placeholders(text string, seen map[string]bool, out []string) []string {
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

func (t Template) header() *TemplateComponent {
	for i := range t.Components {
		if strings.EqualFold(t.Components[i].Type, "HEADER") {
			return &t.Components[i]
		}
	}
	return nil
}

// BodyParamNames returns the distinct placeholders of the BODY text in order of
// first appearance ("1", "2" for positional templates; "first_name" for named
// ones). It returns nil when the body has none or there is no BODY.
func (t Template) BodyParamNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range t.Components {
		if strings.EqualFold(c.Type, "BODY") {
			out = placeholders(c.Text, seen, out)
		}
	}
	return out
}

// BodyParamCount returns the number of distinct {{n}} / {{name}} placeholders in
// the BODY text: the number of body parameters a send needs. It returns 0 when
// there is no BODY or no placeholder.
func (t Template) BodyParamCount() int {
	return len(t.BodyParamNames())
}

// HeaderParamNames returns the distinct placeholders of a TEXT header in order of
// first appearance. It returns nil for no header, a header without placeholders,
// and a media header.
func (t Template) HeaderParamNames() []string {
	h := t.header()
	if h == nil || t.HeaderFormat() != "TEXT" {
		return nil
	}
	return placeholders(h.Text, map[string]bool{}, nil)
}

// HeaderParamCount returns the number of header parameters a send needs: the
// distinct placeholders of a TEXT header, or 1 for any other header format (IMAGE,
// VIDEO, DOCUMENT, GIF, LOCATION, ...), which takes exactly one parameter.
// It returns 0 when there is no header.
func (t Template) HeaderParamCount() int {
	h := t.header()
	switch {
	case h == nil:
		return 0
	case t.HeaderFormat() == "TEXT":
		return len(t.HeaderParamNames())
	default:
		return 1
	}
}

// HeaderFormat returns the upper-cased format of the HEADER component ("TEXT",
// "IMAGE", ...), "TEXT" for a header that names no format, and "" when the
// template has no header.
func (t Template) HeaderFormat() string {
	h := t.header()
	if h == nil {
		return ""
	}
	if h.Format == "" {
		return "TEXT"
	}
	return strings.ToUpper(h.Format)
}

type templatePage struct {
	Data   []Template `json:"data"`
	Paging struct {
		Next string `json:"next"`
	} `json:"paging"`
}

// ListTemplates returns every template of WhatsApp Business Account wabaID. It asks
// for fields id,name,language,status,category,components,parameter_format,rejected_reason with
// limit=100 and follows paging.next until it is absent. A next link pointing to
// another host than the client's base URL is not followed there: its query string
// is applied to the client's own endpoint, so the token never leaves the configured
// host. The client's timeout applies to each page; ctx bounds the whole listing.
// On failure it returns no templates and the first error: ErrInvalidArgument,
// *Error, ErrUnavailable or ErrMalformedResponse (also for a paging loop).
func (c *Client) ListTemplates(ctx context.Context, token, wabaID string) ([]Template, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	if err := checkID("WABA id", wabaID); err != nil {
		return nil, err
	}
	endpoint, err := c.endpoint(wabaID, "message_templates")
	if err != nil {
		return nil, err
	}
	q := url.Values{"fields": {templateFields}, "limit": {"100"}}
	next := endpoint + "?" + q.Encode()

	var out []Template
	seen := map[string]bool{}
	for page := 0; next != ""; page++ {
		if page >= maxTemplatePages {
			return nil, fmt.Errorf("%w: more than %d template pages", ErrMalformedResponse, maxTemplatePages)
		}
		if seen[next] {
			return nil, fmt.Errorf("%w: paging.next repeats %s", ErrMalformedResponse, next)
		}
		seen[next] = true
		data, err := c.do(ctx, http.MethodGet, next, token, nil)
		if err != nil {
			return nil, err
		}
		var p templatePage
		if err := lenientUnmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("%w: template page %d: %v", ErrMalformedResponse, page+1, err)
		}
		out = append(out, p.Data...)
		next, err = c.nextPage(next, endpoint, p.Paging.Next)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// nextPage resolves a paging.next link against the current page, keeping requests
// on the client's own scheme and host.
func (c *Client) nextPage(current, endpoint, next string) (string, error) {
	if next == "" {
		return "", nil
	}
	cur, err := url.Parse(current)
	if err != nil {
		return "", fmt.Errorf("%w: current page URL: %v", ErrMalformedResponse, err)
	}
	n, err := url.Parse(next)
	if err != nil {
		return "", fmt.Errorf("%w: paging.next %q: %v", ErrMalformedResponse, next, err)
	}
	n = cur.ResolveReference(n)
	if strings.EqualFold(n.Scheme, c.baseURL.Scheme) && strings.EqualFold(n.Host, c.baseURL.Host) {
		return n.String(), nil
	}
	if n.RawQuery == "" {
		return "", fmt.Errorf("%w: paging.next %q has no query to carry over", ErrMalformedResponse, next)
	}
	return endpoint + "?" + n.RawQuery, nil
}
