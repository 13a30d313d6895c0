package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"gateway/server/domain"
	"gateway/store"
)

// rejectionsPage is how many rejected rows the preview lists at once.
const rejectionsPage = 100

// importPreviewData is the preview of a staged import (or the record of a confirmed one).
type importPreviewData struct {
	Report     domain.ImportReport
	Rejections []store.ImportRejection
	Next       pageQuery // the next page of rejections; "" when none
}

// Added is how many contacts confirming makes: the staged numbers that are no contact yet.
func (d importPreviewData) Added() int { return d.Report.Staged - d.Report.Existing }

// Staged reports whether the import waits for its confirmation.
func (d importPreviewData) Staged() bool { return d.Report.State == "staged" }

// importReport reads the path's import with the counts of its staged rows, for the preview.
func (d *Dashboard) importReport(w http.ResponseWriter, r *http.Request, s *store.Session) (domain.ImportReport, bool) {
	return loadByPathID(d, w, r, s, d.imports().Report)
}

// importOf reads the path's import without those counts (a staged import may hold two million
// rows): what the download, the confirmation and the discard need.
func (d *Dashboard) importOf(w http.ResponseWriter, r *http.Request, s *store.Session) (domain.ImportReport, bool) {
	return loadByPathID(d, w, r, s, d.imports().Import)
}

// importPreview says what confirming would do: contacts added and updated, duplicates merged,
// blocked and opted-out people, and every rejected row with its line and reason, a page at a
// time (the CSV has them all).
func (d *Dashboard) importPreview(w http.ResponseWriter, r *http.Request, s *store.Session) {
	rep, ok := d.importReport(w, r, s)
	if !ok {
		return
	}
	after := 0
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			d.badPageLink(w, r, s, "after")
			return
		}
		after = n
	}
	rj, err := d.imports().Rejections(r.Context(), s.AccountID, rep.ID, after, rejectionsPage)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := importPreviewData{Report: rep, Rejections: rj}
	if len(rj) == rejectionsPage {
		data.Next = pageQuery("after=" + url.QueryEscape(strconv.Itoa(rj[len(rj)-1].Line)))
	}
	title := "Import preview"
	if !data.Staged() {
		title = "Import"
	}
	d.render(w, r, http.StatusOK, "importpreview", page{Title: title, Nav: "contacts", Session: s, Flash: flash(r), Data: data})
}

// importRejectionsCSV downloads every rejected row (line, reason, detail) through csvExport
// (every cell neutralised against formulas, chunks read with no connection held while
// written, the trailer row at the end).
func (d *Dashboard) importRejectionsCSV(w http.ResponseWriter, r *http.Request, s *store.Session) {
	rep, ok := d.importOf(w, r, s)
	if !ok {
		return
	}
	after := 0
	d.csvExport(w, r, s, fmt.Sprintf("import-%d-rejected.csv", rep.ID), fmt.Sprintf("/dashboard/contacts/imports/%d", rep.ID),
		[]string{"line", "reason", "detail"}, func(ctx context.Context) ([][]string, error) {
			rj, err := d.imports().Rejections(ctx, s.AccountID, rep.ID, after, exportChunk)
			if err != nil || len(rj) == 0 {
				return nil, err
			}
			after = rj[len(rj)-1].Line
			rows := make([][]string, 0, len(rj))
			for _, x := range rj {
				rows = append(rows, []string{strconv.Itoa(x.Line), x.Reason, x.Detail})
			}
			return rows, nil
		})
}

// importConfirm commits the staged import and shows the contacts it tagged (or all contacts).
func (d *Dashboard) importConfirm(w http.ResponseWriter, r *http.Request, s *store.Session) {
	rep, ok := d.importOf(w, r, s)
	if !ok {
		return
	}
	res, err := d.imports().Confirm(r.Context(), s.AccountID, rep.ID, d.cfg.Clock())
	if errors.Is(err, store.ErrImportConfirmed) {
		redirect(w, r, Prefix+"/contacts/imports/"+strconv.FormatInt(rep.ID, 10), "import-confirmed-before")
		return
	}
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, auditImportConfirmed, fmt.Sprintf("import %d", rep.ID),
		fmt.Sprintf("%d added, %d updated, %d tagged %q, %d rejected", res.Created, res.Updated, res.Tagged, rep.Tag, rep.Parsed.Rejected))
	to := Prefix + "/contacts"
	if rep.Tag != "" {
		to += "?tag=" + url.QueryEscape(rep.Tag)
	}
	notice := "imported"
	if res.NameSearchLater {
		notice = "imported-indexing"
	}
	redirect(w, r, to, notice)
}

// importDiscard deletes the staged import; no contact changes.
func (d *Dashboard) importDiscard(w http.ResponseWriter, r *http.Request, s *store.Session) {
	rep, ok := d.importOf(w, r, s)
	if !ok {
		return
	}
	if rep.State != "staged" {
		redirect(w, r, Prefix+"/contacts/imports/"+strconv.FormatInt(rep.ID, 10), "import-confirmed-before")
		return
	}
	if err := d.imports().Discard(r.Context(), s.AccountID, rep.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		d.serverError(w, r, err)
		return
	}
	d.audit(r, s.AccountID, s.UserID, auditImportDiscarded, fmt.Sprintf("import %d", rep.ID),
		fmt.Sprintf("%d rows staged, %d rejected", rep.Parsed.Valid, rep.Parsed.Rejected))
	redirect(w, r, Prefix+"/contacts", "import-discarded")
}

// reasonWords put the parser's rejection reasons in words.
var reasonWords = map[string]string{
	"missing_number": "No number",
	"invalid_number": "Not a valid number",
	"malformed_row":  "Not valid CSV",
	"column_count":   "More cells than columns",
}

// Reason is a rejection reason in words.
func (importPreviewData) Reason(code string) string { return orHumanize(reasonWords, code) }
