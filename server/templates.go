package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"gateway/gen"
	"gateway/platform/whatsapp"
	"gateway/server/domain"
	"gateway/store"
)

// maxTemplatesListed is the most GET /templates returns (spec, Limits).
const maxTemplatesListed = 200

// ListTemplates lists the account's approved templates, newest first, at most 200. Test and
// demo keys see the three sandbox fixtures.
func (a *api) ListTemplates(ctx context.Context, _ gen.ListTemplatesRequestObject) (gen.ListTemplatesResponseObject, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, err
	}
	ts, err := p.data.templates(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	out := gen.TemplateList{Templates: make([]gen.Template, 0, len(ts))}
	for _, t := range ts {
		out.Templates = append(out.Templates, templateOut(t))
	}
	return gen.ListTemplates200JSONResponse{Body: gen.TemplatesEnvelope{Success: true, Message: "OK", Data: out}}, nil
}

func templateOut(t store.Template) gen.Template {
	body, header := t.BodyParams, domain.HeaderTextParams(t)
	hf := gen.TemplateHeaderFormat(domain.HeaderFormat(t))
	buttons := make([]gen.TemplateButton, len(t.Buttons))
	for i, b := range t.Buttons {
		buttons[i] = gen.TemplateButton{Index: b.Index, Type: b.Type, Text: b.Text, TakesValue: b.TakesValue}
	}
	out := gen.Template{
		Id: t.ID, Name: t.Name, Language: t.Language, Status: gen.APPROVED,
		Category:      gen.TemplateCategory{Id: t.CategoryID, Name: t.CategoryName, Label: t.CategoryLabel},
		BodyVariables: body, HeaderVariables: header, HeaderFormat: hf, Buttons: buttons,
	}
	if len(t.Unsupported) > 0 {
		u := []string(t.Unsupported)
		out.Unsupported = &u
	}
	return out
}

// SyncTemplates is the domain's template sync (domain.TemplateSync.Sync) over the server's
// store and platform: what `gateway admin templates sync` runs, what the TemplateSyncer runs
// periodically, what the dashboard's "Sync now" and a template status webhook trigger.
func (s *Server) SyncTemplates(ctx context.Context, accountID int64) (domain.SyncResult, error) {
	return s.templates.Sync(ctx, accountID)
}

// platformTemplates lists a WABA's templates from the platform as the store keeps them: the
// domain's TemplateSource over the platform client.
type platformTemplates struct{ p Platform }

func (pt platformTemplates) ListTemplates(ctx context.Context, token, wabaID string) ([]store.TemplateInput, error) {
	listed, err := pt.p.ListTemplates(ctx, token, wabaID)
	if err != nil {
		return nil, err
	}
	in := make([]store.TemplateInput, 0, len(listed))
	for _, t := range listed {
		ti, err := templateInput(t)
		if err != nil {
			return nil, err
		}
		in = append(in, ti)
	}
	return in, nil
}

// templateInput reduces a platform template to what the store keeps.
func templateInput(t whatsapp.Template) (store.TemplateInput, error) {
	comps := make([]json.RawMessage, 0, len(t.Components))
	for _, c := range t.Components {
		raw := c.Raw
		if len(raw) == 0 {
			b, err := json.Marshal(c)
			if err != nil {
				return store.TemplateInput{}, fmt.Errorf("template %s: %w", t.ID, err)
			}
			raw = b
		}
		comps = append(comps, raw)
	}
	b, err := json.Marshal(comps)
	if err != nil {
		return store.TemplateInput{}, fmt.Errorf("template %s: %w", t.ID, err)
	}
	var buttons store.TemplateButtons
	for _, sb := range t.SendButtons() {
		buttons = append(buttons, store.TemplateButton{Index: sb.Index, Type: sb.Type, Text: sb.Text, TakesValue: sb.TakesValue})
	}
	return store.TemplateInput{
		PlatformID: t.ID, Name: t.Name, Language: t.Language,
		Status:          strings.ToUpper(strings.TrimSpace(t.Status)),
		Category:        strings.ToUpper(strings.TrimSpace(t.Category)),
		ParameterFormat: strings.ToUpper(strings.TrimSpace(t.ParameterFormat)),
		HeaderFormat:    t.HeaderFormat(),
		HeaderParams:    t.HeaderParamCount(),
		BodyParams:      t.BodyParamCount(),
		Components:      b,
		Buttons:         buttons,
		Unsupported:     t.Unsupported(),
		RejectedReason:  strings.TrimSpace(t.RejectedReason),
	}, nil
}
