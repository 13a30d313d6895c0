package server

import (
	"encoding/json"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"gateway/gen"
	"gateway/server/dashboard"
)

// The panel's send form as an API send request: the form's values become a
// gen.SendTemplateRequest, checked the way apiMiddleware checks a request body (strict input,
// then the SendTemplateRequest schema of openapi.yaml) and checkSendRequest does; sendLive
// then applies the template's rules (sendParams). Every refusal is keyed by the API's field
// path and translated to the form's input (panelField), so each shows next to its field.

// panelRequest builds the API request of the form in (destination already normalised to
// digits when it could be) and returns it, the button index of each button_variables entry
// (the API names entries by position), and the field errors of the API's request checks
// (nil when there are none).
func (s *Server) panelRequest(in dashboard.PanelSend, destination string) (*gen.SendTemplateRequest, []int, gen.FieldErrors) {
	fe := gen.FieldErrors{}
	b := &gen.SendTemplateRequest{Destination: destination, TemplateId: &in.TemplateID}
	if in.Name != "" {
		b.Name = &in.Name
	}
	if in.CampaignName != "" {
		b.CampaignName = &in.CampaignName
	}
	if len(in.BodyVariables) > 0 {
		b.BodyVariables = &in.BodyVariables
	}
	if len(in.HeaderVariables) > 0 {
		b.HeaderVariables = &in.HeaderVariables
	}
	if m := in.HeaderMedia; m != nil {
		hm := &gen.HeaderMedia{Type: gen.HeaderMediaType(m.Type)}
		if m.Link != "" {
			hm.Link = &m.Link
		}
		if m.ID != "" {
			hm.Id = &m.ID
		}
		if m.Filename != "" {
			hm.Filename = &m.Filename
		}
		b.HeaderMedia = hm
	}
	if l := in.HeaderLocation; l != nil {
		hl := &gen.HeaderLocation{}
		for _, c := range []struct {
			field, text string
			to          *float64
		}{{"header_location.latitude", l.Latitude, &hl.Latitude}, {"header_location.longitude", l.Longitude, &hl.Longitude}} {
			f, err := strconv.ParseFloat(strings.TrimSpace(c.text), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				fe[c.field] = []string{"must be a number, e.g. -23.5614"}
				continue
			}
			*c.to = f
		}
		if l.Name != "" {
			hl.Name = &l.Name
		}
		if l.Address != "" {
			hl.Address = &l.Address
		}
		b.HeaderLocation = hl
	}
	var buttonAt []int
	if len(in.ButtonValues) > 0 {
		bvs := []gen.ButtonVariable{}
		for _, i := range slices.Sorted(maps.Keys(in.ButtonValues)) {
			if v := in.ButtonValues[i]; v != "" {
				bvs = append(bvs, gen.ButtonVariable{Index: i, Value: v})
				buttonAt = append(buttonAt, i)
			}
		}
		if len(bvs) > 0 {
			b.ButtonVariables = &bvs
		}
	}
	for k, v := range s.checkAsRequestBody(b) {
		if _, seen := fe[k]; !seen {
			fe[k] = v
		}
	}
	for k, v := range checkSendRequest(b) {
		fe[k] = append(fe[k], v...)
	}
	if len(fe) == 0 {
		return b, buttonAt, nil
	}
	return b, buttonAt, fe
}

// checkAsRequestBody runs the checks apiMiddleware runs on a JSON body: strict input (NUL,
// invalid UTF-8) and the SendTemplateRequest schema, with the same field paths and reasons.
func (s *Server) checkAsRequestBody(b *gen.SendTemplateRequest) gen.FieldErrors {
	fe := gen.FieldErrors{}
	raw, err := json.Marshal(b)
	if err != nil { // a value JSON cannot carry (already refused above)
		fe["body"] = []string{err.Error()}
		return fe
	}
	if scanJSON(raw, fe); len(fe) > 0 {
		return fe
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		fe["body"] = []string{err.Error()}
		return fe
	}
	ref := s.spec.Components.Schemas["SendTemplateRequest"]
	if ref == nil || ref.Value == nil {
		fe["body"] = []string{"the send request's schema is missing from openapi.yaml"}
		return fe
	}
	if err := ref.Value.VisitJSON(v, openapi3.MultiErrors(), openapi3.VisitAsRequest(), openapi3.DisableSchemaErrorDetails()); err != nil {
		return fieldErrors(err)
	}
	return fe
}

// Form inputs of the send page, by the API's field path (see dashboard.PanelSend).
var panelFields = map[string]string{
	"destination": "destination", "name": "name", "campaign_name": "campaign",
	"body_variables": "body", "header_variables": "header",
	"header_media": "media", "header_media.type": "media", "header_media.link": "media_link",
	"header_media.id": "media_id", "header_media.filename": "media_filename",
	"header_location": "location", "header_location.latitude": "latitude", "header_location.longitude": "longitude",
	"header_location.name": "location_name", "header_location.address": "location_address",
	"button_variables": "buttons",
}

// reButtonReason finds the button a general button_variables reason is about: they name it the
// way describeButton does ("button 0 (URL ...)").
var reButtonReason = regexp.MustCompile(`^the template's button (\d+) \(`)

// panelField is the form input the API's field path key is about (dashboard.PanelSend's
// FieldErrors keys: body.1, media_link, button_0, ...), or "" for the form as a whole (the
// template). buttonAt maps a button_variables position to its button index; reason picks the
// button of a reason about the whole list.
func panelField(key string, buttonAt []int, reason string) string {
	if f, ok := panelFields[key]; ok {
		if f == "buttons" {
			if m := reButtonReason.FindStringSubmatch(reason); m != nil {
				return "button_" + m[1]
			}
		}
		return f
	}
	head, rest, _ := strings.Cut(key, ".")
	switch head {
	case "body_variables", "header_variables":
		n, _, _ := strings.Cut(rest, ".")
		return panelFields[head] + "." + n
	case "button_variables":
		pos, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(pos); err == nil && i >= 0 && i < len(buttonAt) {
			return "button_" + strconv.Itoa(buttonAt[i])
		}
		return "buttons"
	}
	return ""
}

// panelRefusal is the 422 (or other refusal) of fe for the form: each reason under its input,
// the message listing those that belong to no input.
func panelRefusal(status int, fe gen.FieldErrors, buttonAt []int) *dashboard.SendRefused {
	r := &dashboard.SendRefused{Status: status, FieldErrors: map[string]string{}}
	var general []string
	for _, k := range sortedKeys(fe) {
		for _, reason := range fe[k] {
			f := panelField(k, buttonAt, reason)
			if f == "" {
				general = append(general, k+": "+reason)
				continue
			}
			if prev := r.FieldErrors[f]; prev != "" {
				reason = prev + "; " + reason
			}
			r.FieldErrors[f] = reason
		}
	}
	r.Message = "The send was refused: correct the fields marked below."
	if len(general) > 0 {
		r.Message = "The send was refused: " + strings.Join(general, "; ") + "."
	}
	return r
}
