package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"gateway/server/audience"
	"gateway/server/domain"
	"gateway/store"
)

// Contacts → Import from a spreadsheet: upload a CSV (import_upload.go), map its columns, see
// the preview (importpreview.go), then confirm or discard. Nothing changes a contact before
// the confirmation.

// Audit actions of imports.
const (
	auditImportConfirmed = "contacts.imported"
	auditImportDiscarded = "contacts.import_discarded"
)

func (d *Dashboard) imports() domain.Imports { return domain.Imports{Store: d.cfg.Store} }

// importFormData is the upload step.
type importFormData struct {
	MaxMB int
}

func (d *Dashboard) importForm(w http.ResponseWriter, r *http.Request, s *store.Session) {
	d.renderImportForm(w, r, s, http.StatusOK, "")
}

func (d *Dashboard) renderImportForm(w http.ResponseWriter, r *http.Request, s *store.Session, status int, errMsg string) {
	d.render(w, r, status, "import", page{Title: "Import contacts from a spreadsheet", Nav: "contacts", Session: s, Error: errMsg,
		Data: importFormData{MaxMB: ImportMaxBytes >> 20}})
}

// importUpload receives the file and shows the mapping step, with the suggested mapping
// chosen. A file refused by its size or its header changes nothing.
func (d *Dashboard) importUpload(w http.ResponseWriter, r *http.Request, s *store.Session) {
	token, err := receiveUpload(w, r, s.AccountID)
	if err != nil {
		status := http.StatusUnprocessableEntity
		if errors.Is(err, errUploadTooLarge) {
			status = http.StatusRequestEntityTooLarge
			w.Header().Set("Connection", "close") // the rest of the body is not read
		}
		d.renderImportForm(w, r, s, status, "The file was not accepted: "+err.Error()+".")
		return
	}
	f, _ := openUpload(s.AccountID, token)
	if f == nil {
		d.serverError(w, r, errors.New("the upload just saved is missing"))
		return
	}
	header, _, err := audience.Header(f, audience.Options{})
	f.Close()
	if err != nil {
		removeUpload(s.AccountID, token)
		d.renderImportForm(w, r, s, http.StatusUnprocessableEntity, fileRefusal(err))
		return
	}
	m := audience.SuggestMapping(header)
	data := importMapData{Token: token, Country: "US", Number: m.Number, FirstName: m.FirstName, LastName: m.LastName}
	for i, h := range header {
		data.Columns = append(data.Columns, importColumn{Index: i, Name: h})
	}
	d.renderImportMap(w, r, s, http.StatusOK, data, "")
}

// fileRefusal is the page's sentence for a file the parser refused.
func fileRefusal(err error) string {
	var fe *audience.FileError
	if errors.As(err, &fe) {
		return "The file was refused and nothing was imported: " + fe.Error() + "."
	}
	return "The file was refused and nothing was imported: " + err.Error() + "."
}

// importColumn is a header column of the uploaded file; Variable is the template variable a
// person named for it.
type importColumn struct {
	Index    int
	Name     string
	Variable string
}

// importMapData is the mapping step.
type importMapData struct {
	Token                       string
	Columns                     []importColumn
	Number, FirstName, LastName string
	Country, Tag                string
}

// Countries are the regions numbers may be read in, by ISO code, with their calling codes.
func (importMapData) Countries() []importCountry { return countryList }

type importCountry struct {
	Code string
	Dial int
}

var countryList = func() []importCountry {
	var out []importCountry
	for code := range phonenumbers.GetSupportedRegions() {
		out = append(out, importCountry{Code: code, Dial: phonenumbers.GetCountryCodeForRegion(code)})
	}
	slices.SortFunc(out, func(a, b importCountry) int { return strings.Compare(a.Code, b.Code) })
	return out
}()

func (d *Dashboard) renderImportMap(w http.ResponseWriter, r *http.Request, s *store.Session, status int, data importMapData, errMsg string) {
	d.render(w, r, status, "importmap", page{Title: "Map the spreadsheet's columns", Nav: "contacts", Session: s, Error: errMsg, Data: data})
}

// variableName is what a template variable mapped to a column may be called.
var variableName = regexp.MustCompile(`^[A-Za-z0-9_]{1,60}$`)

// importMap reads the uploaded file with the chosen mapping into a staged import and shows its
// preview. A mapping the form cannot take is shown again with the error; a file the parser
// refuses is deleted, nothing is kept, and the upload step says why.
func (d *Dashboard) importMap(w http.ResponseWriter, r *http.Request, s *store.Session) {
	data := importMapData{Token: r.PostFormValue("token"), Number: r.PostFormValue("number"),
		FirstName: r.PostFormValue("first_name"), LastName: r.PostFormValue("last_name"),
		Country: strings.ToUpper(strings.TrimSpace(r.PostFormValue("country"))), Tag: strings.TrimSpace(r.PostFormValue("tag"))}
	f, ok := openUpload(s.AccountID, data.Token)
	if !ok {
		d.renderImportForm(w, r, s, http.StatusGone, "That upload is no longer here (it was imported, refused or left for a day). Upload the file again.")
		return
	}
	defer f.Close()
	header, _, err := audience.Header(f, audience.Options{})
	if err != nil {
		removeUpload(s.AccountID, data.Token)
		d.renderImportForm(w, r, s, http.StatusUnprocessableEntity, fileRefusal(err))
		return
	}
	m := audience.Mapping{Number: data.Number, FirstName: data.FirstName, LastName: data.LastName, Variables: map[string]string{}}
	var problem string
	for i, h := range header {
		v := strings.TrimSpace(r.PostFormValue("var_" + strconv.Itoa(i)))
		data.Columns = append(data.Columns, importColumn{Index: i, Name: h, Variable: v})
		switch {
		case v == "":
		case !variableName.MatchString(v):
			problem = fmt.Sprintf("The variable name for column “%s” takes letters, digits and underscores (up to 60).", h)
		case m.Variables[v] != "":
			problem = fmt.Sprintf("Two columns are mapped to the variable “%s”.", v)
		default:
			m.Variables[v] = h
		}
	}
	if _, err := domain.CheckTag(data.Tag, true); err != nil {
		problem = "The tag takes up to 100 characters."
	}
	if !phonenumbers.GetSupportedRegions()[data.Country] {
		problem = "Choose the country whose local numbers the file holds."
	}
	if strings.TrimSpace(data.Number) == "" || !slices.Contains(header, data.Number) {
		problem = "Choose the column that holds the phone number."
	}
	if problem != "" {
		d.renderImportMap(w, r, s, http.StatusUnprocessableEntity, data, problem)
		return
	}
	if _, err := f.Seek(0, 0); err != nil {
		d.serverError(w, r, err)
		return
	}
	id, err := d.imports().Stage(r.Context(), s.AccountID, domain.ImportRequest{File: f, Tag: data.Tag,
		Options: audience.Options{DefaultCountry: data.Country, Mapping: m, MaxBytes: ImportMaxBytes}})
	if errors.Is(err, domain.ErrImportFile) {
		removeUpload(s.AccountID, data.Token)
		d.renderImportForm(w, r, s, http.StatusUnprocessableEntity, fileRefusal(err))
		return
	}
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	removeUpload(s.AccountID, data.Token)
	redirect(w, r, Prefix+"/contacts/imports/"+strconv.FormatInt(id, 10), "")
}
