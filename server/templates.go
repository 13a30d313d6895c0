package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gateway/gen"
	"gateway/platform/whatsapp"
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
	body, header := t.BodyParams, headerTextParams(t)
	hf := gen.TemplateHeaderFormat(headerFormat(t))
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

// SyncResult is what one template sync of an account did.
type SyncResult struct {
	AccountID int64 `json:"account_id"`
	// Fetched is how many templates the platform listed (every status); Approved how many of
	// them are approved (and listed by GET /templates).
	Fetched  int `json:"fetched"`
	Approved int `json:"approved"`
	store.TemplateSyncCounts
}

// SyncTemplates pulls every template of the account's WhatsApp Business Account from the
// platform and stores them all (see store.SyncTemplates). It is what `gateway admin templates
// sync` runs, what the TemplateSyncer runs periodically and what a template status webhook
// triggers. It fails with an error wrapping store.ErrNotFound when the account has no number
// connected, with the platform client's error (whatsapp.Error, ErrUnavailable, ...) when the
// listing fails, and when the database fails; then nothing is changed.
func (s *Server) SyncTemplates(ctx context.Context, accountID int64) (SyncResult, error) {
	res := SyncResult{AccountID: accountID}
	conn, err := s.store.ConnectionByAccount(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return res, fmt.Errorf("account %d has no connected number: %w", accountID, err)
	}
	if err != nil {
		return res, err
	}
	if s.platform == nil {
		return res, errors.New("no messaging platform configured")
	}
	listed, err := s.platform.ListTemplates(ctx, conn.AccessToken, conn.WabaID)
	if err != nil {
		return res, fmt.Errorf("list templates of WABA %s: %w", conn.WabaID, err)
	}
	in := make([]store.TemplateInput, 0, len(listed))
	for _, t := range listed {
		ti, err := templateInput(t)
		if err != nil {
			return res, err
		}
		if ti.Status == store.TemplateApproved {
			res.Approved++
		}
		in = append(in, ti)
	}
	res.Fetched = len(in)
	counts, err := s.store.SyncTemplates(ctx, accountID, in)
	if err != nil {
		return res, err
	}
	res.TemplateSyncCounts = counts
	return res, nil
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
