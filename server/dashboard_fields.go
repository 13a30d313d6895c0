package server

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"gateway/gen"
	"gateway/server/domain"
	"gateway/server/refusal"
)

// The dashboard's send form as an API send request: the form's values become a
// gen.SendTemplateRequest, checked the way apiMiddleware checks a request body (strict input,
// then the SendTemplateRequest schema of openapi.yaml) and domain.CheckTemplateSend does; the
// domain's send (domain.FormSends) then applies the template's rules. Every refusal is a
// refusal.Field with the API's field path, which the dashboard shows next to the form input
// for that path.

// formRequest builds the API request of the form in (destination already normalised to
// digits when it could be) and returns it with the broken rules of the API's request checks.
// A rule about a button_variables entry carries the index of its button (the API names
// entries by position).
func (s *Server) formRequest(in domain.FormSend, destination string) (*gen.SendTemplateRequest, refusal.Fields) {
	var fe refusal.Fields
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
				fe.Add(c.field, "must be a number, e.g. -23.5614")
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
	// The schema's reasons, but for a coordinate the form could not read as a number.
	parsed := len(fe)
	for _, f := range refusal.FromMap(s.checkAsRequestBody(b)) {
		if fe[:parsed].Has(f.Path) {
			continue
		}
		head, rest, _ := strings.Cut(f.Path, ".")
		pos, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(pos); head == "button_variables" && err == nil && i >= 0 && i < len(buttonAt) {
			f.Button = buttonAt[i]
		}
		fe = append(fe, f)
	}
	return b, append(fe, domain.CheckTemplateSend(templateSendOf(b))...)
}

// FormSends is the dashboard form's send (domain.FormSends, handed to the dashboard by
// server/web) over this server's send pipeline, the form checked as the API checks a request.
func (s *Server) FormSends() domain.FormSends {
	return domain.FormSends{Sends: s.sends, Check: func(in domain.FormSend, destination string) (domain.TemplateSend, refusal.Fields) {
		b, fe := s.formRequest(in, destination)
		return templateSendOf(b), fe
	}}
}

// PanelAnswers is the contact page's answer (domain.PanelAnswers, handed to the dashboard by
// server/web) over this server's send pipeline.
func (s *Server) PanelAnswers() domain.PanelAnswers { return domain.PanelAnswers{Sends: s.sends} }

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

// PanelMedia is the account's media through the platform (domain.Media: GET /v1/media's
// download and POST /v1/media's upload), for the inbox's media and attachments.
func (s *Server) PanelMedia() domain.Media { return s.media }

// PanelMarkRead sends the read receipt of the account's received message id (POST
// /v1/messages/{id}/read's live operation), for the inbox when a teammate opens a thread.
func (s *Server) PanelMarkRead(ctx context.Context, accountID, id int64) error {
	_, err := s.markReadLive(ctx, accountID, id)
	return err
}
