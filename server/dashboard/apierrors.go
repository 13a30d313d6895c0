package dashboard

import (
	"net/http"
	"strconv"

	"gateway/store"
)

// apiErrorsPage is the number of refused calls on one page.
const apiErrorsPage = 100

type apiErrorsData struct {
	Errors []store.APIError
	Next   int64 // id to continue below; 0 on the last page
}

// apiErrors lists the workspace's recent refused API calls (recorded where the API renders an
// error), newest first: what an integrator's own calls got, as a platform's debugger shows.
func (d *Dashboard) apiErrors(w http.ResponseWriter, r *http.Request, s *store.Session) {
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	es, err := d.cfg.Store.APIErrors(r.Context(), s.AccountID, max(before, 0), apiErrorsPage)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	data := apiErrorsData{Errors: es}
	if len(es) == apiErrorsPage {
		data.Next = es[len(es)-1].ID
	}
	d.render(w, r, http.StatusOK, "apierrors", page{Title: "API errors", Nav: "apierrors", Session: s, Data: data})
}
