package dashboard

import (
	"encoding/json"
	"strings"

	"gateway/store"
)

// sentContent is what a message row keeps of a template send (the API's send path writes it).
type sentContent struct {
	Language        string   `json:"language"`
	HeaderVariables []string `json:"header_variables"`
	BodyVariables   []string `json:"body_variables"`
}

// sentWith is the message a customer received: the template's text with the message's variables
// filled, as the preview of the send form shows it. Without the template (an id the workspace no
// longer has) it is empty and the page lists the variables alone.
type sentWith struct {
	preview
	Known     bool     // the template was found
	Language  string   // as sent
	Variables []string // the body's, then the header's values, for the fallback
}

func describeSent(t *store.Template, content []byte) sentWith {
	var c sentContent
	json.Unmarshal(content, &c)
	out := sentWith{Language: c.Language, Variables: append(append([]string{}, c.BodyVariables...), c.HeaderVariables...)}
	if t == nil {
		return out
	}
	tc := parseComponents(t.Components)
	out.Known = true
	out.Body = substitute(tc.Body, c.BodyVariables)
	out.Footer = tc.Footer
	if strings.EqualFold(t.HeaderFormat, "TEXT") || (t.HeaderFormat == "" && tc.Header != "") {
		out.Header = substitute(tc.Header, c.HeaderVariables)
	}
	for _, b := range tc.Buttons {
		out.Buttons = append(out.Buttons, b.Text)
	}
	return out
}
