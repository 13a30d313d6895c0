package simulator

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Template is a message template as the Graph API lists it (reference §3):
// the definition shape, with upper-case component types (HEADER, BODY,
// FOOTER, BUTTONS). ID must be decimal digits, because template status
// webhooks carry it as a JSON number; SeedTemplates assigns one when empty.
type Template struct {
	ID              string           `json:"id"`
	Name            string           `json:"name"`
	Language        string           `json:"language"`
	Status          string           `json:"status"`
	Category        string           `json:"category"`
	ParameterFormat string           `json:"parameter_format"` // POSITIONAL (default) or NAMED
	Components      []map[string]any `json:"components"`
	RejectedReason  string           `json:"rejected_reason,omitempty"`
}

// TemplateStatuses are the template status values Meta uses (reference §3).
// Only APPROVED is sendable.
var TemplateStatuses = []string{
	"APPROVED", "PENDING", "REJECTED", "PAUSED", "DISABLED", "IN_APPEAL", "FLAGGED",
	"REINSTATED", "PENDING_DELETION", "DELETED", "LIMIT_EXCEEDED", "ARCHIVED", "UNARCHIVED", "LOCKED",
}

// Limits Meta applies to hydrated template text.
const (
	maxBodyChars   = 1024
	maxHeaderChars = 60
)

var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)

// distinctVars returns the distinct placeholder names in text, in order of
// first appearance.
func distinctVars(text string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// templateSpec is what send-time validation needs from a definition.
type templateSpec struct {
	named        bool
	headerFormat string // "" (no header), TEXT, IMAGE, VIDEO, DOCUMENT, GIF, LOCATION, ...
	headerText   string
	headerVars   []string
	bodyText     string
	bodyVars     []string
	buttons      []string     // upper-case button types by index; OTP for an AUTHENTICATION template's code button
	urlVar       map[int]bool // URL buttons whose url has a placeholder
}

// storedTemplate is a template plus its parsed spec.
type storedTemplate struct {
	t    Template
	spec templateSpec
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// parseSpec reads the definition's components.
func parseSpec(t Template) templateSpec {
	sp := templateSpec{named: strings.EqualFold(t.ParameterFormat, "NAMED"), urlVar: map[int]bool{}}
	auth := strings.EqualFold(t.Category, "AUTHENTICATION")
	for _, c := range t.Components {
		switch strings.ToUpper(str(c["type"])) {
		case "HEADER":
			sp.headerFormat = strings.ToUpper(str(c["format"]))
			if sp.headerFormat == "" {
				sp.headerFormat = "TEXT"
			}
			if sp.headerFormat == "TEXT" {
				sp.headerText = str(c["text"])
				sp.headerVars = distinctVars(sp.headerText)
			}
		case "BODY":
			sp.bodyText = str(c["text"])
			sp.bodyVars = distinctVars(sp.bodyText)
		case "BUTTONS":
			list, _ := c["buttons"].([]any)
			for i, b := range list {
				m, _ := b.(map[string]any)
				bt := strings.ToUpper(str(m["type"]))
				if auth && (bt == "URL" || bt == "OTP") {
					// Meta lists an authentication template's copy-code button as URL; at send time
					// it takes the code as a url button's text (reference §10).
					bt = "OTP"
				}
				sp.buttons = append(sp.buttons, bt)
				if bt == "URL" && placeholderRE.MatchString(str(m["url"])) {
					sp.urlVar[i] = true
				}
			}
		}
	}
	return sp
}

// normalizeTemplate deep-copies t through JSON (so nested values are plain
// maps and slices) and fills the defaults.
func normalizeTemplate(t Template) (Template, error) {
	b, err := json.Marshal(t.Components)
	if err != nil {
		return t, fmt.Errorf("simulator: template %q components: %w", t.Name, err)
	}
	var comps []map[string]any
	if err := json.Unmarshal(b, &comps); err != nil {
		return t, fmt.Errorf("simulator: template %q components: %w", t.Name, err)
	}
	if comps == nil {
		comps = []map[string]any{}
	}
	t.Components = comps
	if t.ParameterFormat == "" {
		t.ParameterFormat = "POSITIONAL"
	}
	t.ParameterFormat = strings.ToUpper(t.ParameterFormat)
	if t.Status == "" {
		t.Status = "APPROVED"
	}
	t.Status = strings.ToUpper(t.Status)
	t.Category = strings.ToUpper(t.Category)
	if t.Category == "" {
		t.Category = "UTILITY"
	}
	return t, nil
}

// copyTemplate returns t with its own copy of the components.
func copyTemplate(t Template) Template {
	n, err := normalizeTemplate(t)
	if err != nil {
		return t
	}
	return n
}
