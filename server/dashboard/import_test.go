package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"gateway/server/dashboard"
	"gateway/server/servertest"
	"gateway/server/worker"
	"gateway/store"
)

// upload posts body as the import form's file and returns the page.
func (u *user) upload(name string, body io.Reader) page {
	u.t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fw, err := mw.CreateFormFile("file", name)
		if err == nil {
			_, err = io.Copy(fw, body)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest("POST", u.base+"/dashboard/contacts/import", pr)
	if err != nil {
		u.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := u.c.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

var reUploadToken = regexp.MustCompile(`name="token" value="([0-9a-f]{32})"`)

// mapUpload uploads the CSV and posts the mapping form with the fields (token added); it
// returns the mapping response.
func mapUpload(t *testing.T, u *user, csv string, fields url.Values) page {
	t.Helper()
	p := u.upload("contacts.csv", strings.NewReader(csv))
	m := reUploadToken.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil {
		t.Fatalf("upload: %d\n%s", p.Status, p.Body)
	}
	fields.Set("token", m[1])
	return u.post("/dashboard/contacts/import/map", fields)
}

// importCounts is the account's contacts, imports, staged rows and rejections.
func importCounts(t *testing.T, env *servertest.Env, acct int64) string {
	t.Helper()
	var c, i, r, j int
	err := env.Store.DB().QueryRow(`SELECT (SELECT count(*) FROM contacts WHERE account_id = $1),
		(SELECT count(*) FROM contact_imports WHERE account_id = $1), (SELECT count(*) FROM contact_import_rows WHERE account_id = $1),
		(SELECT count(*) FROM contact_import_rejections WHERE account_id = $1)`, acct).Scan(&c, &i, &r, &j)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("contacts %d, imports %d, rows %d, rejections %d", c, i, r, j)
}

const importCSV = "Phone,First name,Last name,Order\n" +
	"(11) 98765-4321,Ana,Silva,A1\n" + // line 2: a local Brazilian number
	"12345,Bad,Number,A2\n" + // line 3: rejected
	",No,Number,A3\n" + // line 4: rejected
	"+55 11 8765-4321,Ana,Again,A4\n" + // line 5: line 2's person without the mobile 9: merged
	"+1 415 555 0100,\"=HYPERLINK(\"\"http://x\"\")\",Formula,A5\n" + // line 6: a formula cell, kept as text
	"+44 7911 123456,Blocked,Person,A6\n" + // line 7: an existing blocked contact
	"+49 1512 3456789,Opted,Out,A7\n" + // line 8: an existing contact that replied STOP
	"+33 6 12 34 56 78,Marie,Curie,@SUM(1)\n" // line 9: a formula in a variable column

// The import flow: upload, the suggested mapping chosen, a preview that counts what would
// change and lists every rejected row, nothing changed before the confirmation; confirm makes
// the contacts with the tag; another upload discarded leaves nothing. Both are audited.
func TestImportPreviewConfirmDiscard(t *testing.T) {
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	ctx := context.Background()
	for _, m := range []string{"447911123456", "4915123456789"} {
		if _, _, err := env.Store.UpsertContact(ctx, acct, store.ContactInput{Mobile: m}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.Store.SetContactBlocked(ctx, acct, m, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Store.AddAudit(ctx, acct, 0, store.AuditContactBlocked, "4915123456789", store.OptOutDetail); err != nil {
		t.Fatal(err)
	}

	p := u.upload("contacts.csv", strings.NewReader(importCSV))
	for _, want := range []string{`<option value="Phone" selected>`, `<option value="First name" selected>`, `<option value="Last name" selected>`, `id="var-3"`} {
		if p.Status != http.StatusOK || !strings.Contains(p.Body, want) {
			t.Fatalf("mapping page lacks %s: %d\n%s", want, p.Status, p.Body)
		}
	}
	token := reUploadToken.FindStringSubmatch(p.Body)[1]
	p = u.post("/dashboard/contacts/import/map", url.Values{"token": {token}, "number": {"Phone"}, "first_name": {"First name"},
		"last_name": {"Last name"}, "country": {"BR"}, "tag": {"spring sale"}, "var_3": {"order"}})
	loc := p.Header.Get("Location")
	if p.Status != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/contacts/imports/") {
		t.Fatalf("map: %d %s\n%s", p.Status, loc, p.Body)
	}
	if got := importCounts(t, env, acct); got != "contacts 2, imports 1, rows 5, rejections 2" {
		t.Fatalf("after staging: %s", got)
	}
	if u.post("/dashboard/contacts/import/map", url.Values{"token": {token}, "number": {"Phone"}, "country": {"BR"}}).Status != http.StatusGone {
		t.Error("an upload used once was accepted again")
	}
	p = u.get(loc)
	for _, want := range []string{`id="count-rows">8<`, `id="count-added">3<`, `id="count-updated">2<`, `id="count-blocked">2 `,
		`id="count-optedout">1<`, `id="count-duplicates">1<`, `id="count-rejected">2<`, `id="count-formulas">2 `,
		`<td data-label="Line">3</td><td data-label="Reason">Not a valid number</td>`, `<td data-label="Line">4</td><td data-label="Reason">No number</td>`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("preview lacks %s", want)
		}
	}
	if t.Failed() {
		t.Fatalf("preview:\n%s", p.Body)
	}
	csv := u.get(loc + "/rejected.csv")
	if csv.Status != http.StatusOK || !strings.HasPrefix(csv.Body, "line,reason,detail\n3,invalid_number,") || !strings.Contains(csv.Body, "\n4,missing_number,") ||
		!strings.HasSuffix(csv.Body, "\n"+dashboard.ExportTrailer+",2,\n") {
		t.Errorf("rejections CSV: %d\n%s", csv.Status, csv.Body)
	}

	p = u.post(loc+"/confirm", nil)
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/contacts?tag=spring+sale&notice=imported" {
		t.Fatalf("confirm: %d %s", p.Status, p.Header.Get("Location"))
	}
	page := u.get(p.Header.Get("Location"))
	for _, want := range []string{"5 contacts tagged “spring sale”", "Ana Silva", "=HYPERLINK(&#34;http://x&#34;) Formula", "Marie Curie"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("contacts after confirm lack %q", want)
		}
	}
	var first string
	if err := env.Store.DB().Get(&first, `SELECT firstname FROM contacts WHERE account_id = $1 AND mobile = '14155550100'`, acct); err != nil || first != `=HYPERLINK("http://x")` {
		t.Errorf("the formula cell stored as %q (%v), want the text as written", first, err)
	}
	if got := u.post(loc+"/confirm", nil); got.Header.Get("Location") != loc+"?notice=import-confirmed-before" {
		t.Errorf("second confirm: %d %s", got.Status, got.Header.Get("Location"))
	}

	// Another import, discarded: nothing of it remains and no contact changed.
	before := importCounts(t, env, acct)
	p = mapUpload(t, u, "mobile\n+1 415 555 0199\nnot a number\n", url.Values{"number": {"mobile"}, "country": {"US"}, "tag": {"later"}})
	loc2 := p.Header.Get("Location")
	if p = u.post(loc2+"/discard", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("discard: %d", p.Status)
	}
	if got := importCounts(t, env, acct); got != before {
		t.Errorf("after discard: %s, want %s", got, before)
	}
	if u.get(loc2).Status != http.StatusNotFound {
		t.Error("a discarded import's page is still there")
	}
	audit := auditActions(t, env, acct)
	if !strings.Contains(audit, "contacts.imported import") || !strings.Contains(audit, "3 added, 2 updated, 5 tagged \"spring sale\", 2 rejected") ||
		!strings.Contains(audit, "contacts.import_discarded import") {
		t.Errorf("audit log:\n%s", audit)
	}

	// Another workspace sees none of it.
	other := signUp(t, env, "Beta", "bob@beta.example")
	if other.get(loc).Status != http.StatusNotFound || other.post(loc+"/confirm", nil).Status != http.StatusNotFound {
		t.Error("another workspace reached the import")
	}
}

// Malformed files get a clear error on the upload page and change nothing: another encoding,
// no number column, a 10 MB line, a mapping that names no column; formula cells are text.
func TestImportMalformedFilesChangeNothing(t *testing.T) {
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	want := "contacts 0, imports 0, rows 0, rejections 0"

	latin1 := "Phone,Name\n+1 415 555 0100,Jos\xe9\n"
	p := mapUpload(t, u, latin1, url.Values{"number": {"Phone"}, "country": {"US"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "nothing was imported: line 2: the file is not UTF-8 text") {
		t.Errorf("Latin-1 file: %d\n%s", p.Status, p.Body)
	}
	p = u.upload("latin1-header.csv", strings.NewReader("T\xe9l\xe9phone,Nom\n1,2\n"))
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "not UTF-8 text") {
		t.Errorf("Latin-1 header: %d\n%s", p.Status, p.Body)
	}
	if p = u.upload("bom.csv", strings.NewReader("\ufeffPhone,Name\n+1 415 555 0100,Ana\n")); p.Status != http.StatusOK || !strings.Contains(p.Body, `<option value="Phone" selected>`) {
		t.Errorf("a UTF-8 byte-order mark: %d\n%s", p.Status, p.Body)
	}

	p = mapUpload(t, u, "Name,City\nAna,Lisbon\n", url.Values{"number": {""}, "country": {"PT"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "Choose the column that holds the phone number.") {
		t.Errorf("no number column: %d\n%s", p.Status, p.Body)
	}
	p = mapUpload(t, u, "Name,City\nAna,Lisbon\n", url.Values{"number": {"Phone"}, "country": {"PT"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "Choose the column that holds the phone number.") {
		t.Errorf("a number column the file lacks: %d\n%s", p.Status, p.Body)
	}

	long := "Phone,Note\n+1 415 555 0100,ok\n+1 415 555 0101," + strings.Repeat("x", 10<<20) + "\n"
	p = mapUpload(t, u, long, url.Values{"number": {"Phone"}, "country": {"US"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "nothing was imported: line 3: a line is longer than the limit") {
		t.Errorf("a 10 MB line: %d\n%.2000s", p.Status, p.Body)
	}
	if p = u.upload("empty.csv", strings.NewReader("")); p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "the file is empty") {
		t.Errorf("an empty file: %d\n%s", p.Status, p.Body)
	}
	if got := importCounts(t, env, acct); got != want {
		t.Errorf("after the refused files: %s", got)
	}
}

// countingReader yields n bytes of a CSV row, counting what was read. The count is atomic: the
// HTTP client may still be sending the body when the test reads it.
type countingReader struct {
	n    int64
	read atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	read := c.read.Load()
	if read >= c.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), c.n-read)
	copy(p, bytes.Repeat([]byte("+14155550100\n"), int(k)/13+1)[:k])
	c.read.Add(k)
	return int(k), nil
}

// A 2 GB upload is refused by its Content-Length with the upload page's error, before the
// gateway reads it: the client is answered while it has sent a small part of the body.
func TestImportRefusesTwoGigabytesEarly(t *testing.T) {
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	body := &countingReader{n: 2 << 30}
	req, err := http.NewRequest("POST", u.base+"/dashboard/contacts/import", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = body.n
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := u.c.Do(req)
	if err != nil {
		t.Fatalf("the refusal did not reach the client: %v (sent %d bytes)", err, body.read.Load())
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "The file was not accepted: the file is larger than 256 MB") {
		t.Errorf("2 GB upload: %d\n%s", resp.StatusCode, b)
	}
	if sent := body.read.Load(); sent > 64<<20 {
		t.Errorf("the client sent %d bytes before the refusal", sent)
	}
	if got := importCounts(t, env, acct); got != "contacts 0, imports 0, rows 0, rejections 0" {
		t.Errorf("after the refusal: %s", got)
	}
}

// An import of 10,000 rows or more is confirmed without waiting for the name index: the
// notice says the name search catches up, the contacts are listed at once, and a name search
// says it may miss some until the indexer (every gateway runs it) has drained the backlog;
// then it finds them and says nothing.
func TestLargeImportNameSearchCatchesUp(t *testing.T) {
	env := newEnv(t, true)
	u := signUp(t, env, "Acme", "owner@acme.example")
	acct := accountOf(t, env.Store, "owner@acme.example")
	const rows = 12_000
	p := u.upload("large.csv", millionCSV(rows))
	m := reUploadToken.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil {
		t.Fatalf("upload: %d\n%.2000s", p.Status, p.Body)
	}
	p = u.post("/dashboard/contacts/import/map", url.Values{"token": {m[1]}, "number": {"Phone"}, "first_name": {"First"},
		"last_name": {"Last"}, "country": {"BR"}})
	if p.Status != http.StatusSeeOther {
		t.Fatalf("map: %d\n%.2000s", p.Status, p.Body)
	}
	if p = u.post(p.Header.Get("Location")+"/confirm", nil); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/contacts?notice=imported-indexing" {
		t.Fatalf("confirm: %d %s", p.Status, p.Header.Get("Location"))
	}
	if page := u.get(p.Header.Get("Location")); !strings.Contains(page.Body, "name search finds the new ones within a few minutes") {
		t.Errorf("the confirmation's notice does not say the name search catches up:\n%.3000s", page.Body)
	}
	page := u.get("/dashboard/contacts?search=Name1234")
	if !strings.Contains(page.Body, `id="names-indexing"`) || !strings.Contains(page.Body, "0 contacts match") {
		t.Errorf("a name search during the backlog:\n%.3000s", page.Body)
	}
	n, err := worker.NewNameIndexer(env.Store, worker.NameIndexerConfig{}).Drain(context.Background(), acct)
	if err != nil || n < rows*8/10 {
		t.Fatalf("the indexer took %d contacts (%v)", n, err)
	}
	// Row 1234 is "Name1234 Surname"; no other name holds "name1234".
	page = u.get("/dashboard/contacts?search=Name1234")
	if strings.Contains(page.Body, `id="names-indexing"`) || !strings.Contains(page.Body, "1 contact match") {
		t.Errorf("a name search after the indexer:\n%.3000s", page.Body)
	}
}
