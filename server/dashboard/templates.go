package dashboard

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"gateway/store"
)

// TemplateSyncer pulls the workspace's templates from the platform now.
type TemplateSyncer func(ctx context.Context, accountID int64) error

var (
	templateStatuses   = []string{"APPROVED", "PENDING", "REJECTED", "PAUSED", "DISABLED", "IN_APPEAL", "LIMIT_EXCEEDED"}
	templateCategories = []string{"MARKETING", "UTILITY", "AUTHENTICATION"}
	placeholder        = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)
)

type templateRow struct {
	store.ListedTemplate
	Body, Preview, Header, Footer string
	Variables                     []string
	ButtonTexts                   []string
	Reason                        string // the rejection reason to show ("" when none)
}

type templatesData struct {
	Templates            []templateRow
	Statuses, Categories []string
	Status, Category     string
	CanSync              bool
}

// templates lists every template of the workspace with its status (and the rejection reason),
// category, language, header format, variables, buttons and a preview of the body with its
// variables shown by name; filter by status and category; "Sync now".
func (d *Dashboard) templates(w http.ResponseWriter, r *http.Request, s *store.Session) {
	q := r.URL.Query()
	data := templatesData{Statuses: templateStatuses, Categories: templateCategories, CanSync: d.cfg.Syncer != nil}
	if v := strings.ToUpper(q.Get("status")); slices.Contains(templateStatuses, v) {
		data.Status = v
	}
	if v := strings.ToUpper(q.Get("category")); slices.Contains(templateCategories, v) {
		data.Category = v
	}
	ts, err := d.cfg.Store.TemplatesByAccount(r.Context(), s.AccountID, data.Status, data.Category)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	for _, t := range ts {
		data.Templates = append(data.Templates, describeTemplate(t))
	}
	d.render(w, r, http.StatusOK, "templates", page{Title: "Templates", Nav: "templates", Session: s, Flash: flash(r), Data: data})
}

func describeTemplate(t store.ListedTemplate) templateRow {
	row := templateRow{ListedTemplate: t}
	tc := parseComponents(t.Components)
	row.Header, row.Body, row.Footer = tc.Header, tc.Body, tc.Footer
	for _, b := range tc.Buttons {
		row.ButtonTexts = append(row.ButtonTexts, b.Text+" ("+strings.ToLower(strings.ReplaceAll(b.Type, "_", " "))+")")
	}
	for _, m := range placeholder.FindAllStringSubmatch(row.Header+" "+row.Body, -1) {
		if !slices.Contains(row.Variables, m[1]) {
			row.Variables = append(row.Variables, m[1])
		}
	}
	// One notation for variables everywhere: {{1}}, as on the platform.
	row.Preview = placeholder.ReplaceAllString(row.Body, "{{$1}}")
	row.Reason = t.RejectedReason // kept only for REJECTED, never "NONE" (store.keptRejectionReason)
	return row
}

// syncTemplates pulls the templates from the platform now.
func (d *Dashboard) syncTemplates(w http.ResponseWriter, r *http.Request, s *store.Session) {
	if d.cfg.Syncer == nil {
		redirect(w, r, Prefix+"/templates", "sync-unavailable")
		return
	}
	if err := d.cfg.Syncer(r.Context(), s.AccountID); err != nil {
		d.log.WarnContext(r.Context(), "dashboard template sync", "account_id", s.AccountID, "error", err.Error())
		redirect(w, r, Prefix+"/templates", "sync-failed")
		return
	}
	redirect(w, r, Prefix+"/templates", "synced")
}
