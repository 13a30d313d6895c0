package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
	"gateway/server/servertest"
	"gateway/server/worker"
	"gateway/store"
)

// seedImport stages an import with two rows and a rejection, for pages that show one.
func seedImport(t *testing.T, env *servertest.Env, acct int64) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := env.Store.CreateImport(ctx, acct, "vip", []byte(`{"rows":3,"valid":2,"rejected":1,"duplicates_merged":0,"formula_cells":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Store.AddImportRows(ctx, acct, id, []store.ImportRow{{Line: 2, Mobile: "14155550100", FirstName: "Ana"}, {Line: 4, Mobile: "14155550101"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.AddImportRejections(ctx, acct, id, []store.ImportRejection{{Line: 3, Reason: "invalid_number", Detail: `"12345" is not a valid phone number in US or in international form`}}); err != nil {
		t.Fatal(err)
	}
	return id
}

// The spreadsheet import in Chromium at 1280 and 390 px, with the keyboard and axe-core on
// every page: upload a CSV with bad rows, keep the suggested mapping, choose the country and a
// tag, see the preview with the rejected rows, confirm, find the contacts with their tag, and
// save the tag as an audience that lists its count.
func TestBrowserImportAndAudience(t *testing.T) {
	env := newEnv(t, true)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	signUpInBrowser(t, b, env, "Import Bakery", "import@example.com")
	// The empty states first: no contacts, no tags, no audiences.
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("contacts empty", chromedp.Navigate(base+"/contacts"), chromedp.WaitVisible("#contacts-empty", chromedp.ByQuery))
		if got := b.Text("#contacts-empty"); !strings.Contains(got, "No contacts yet. Import a spreadsheet") {
			t.Errorf("contacts empty state %q", got)
		}
		b.CheckPage(fmt.Sprintf("contacts-empty-%d", width))
		b.Run("audiences empty", chromedp.Navigate(base+"/audiences"), chromedp.WaitVisible("#audiences-empty", chromedp.ByQuery))
		if got := b.Text("#new-audience-h + p"); !strings.Contains(got, "Tag contacts first") {
			t.Errorf("audiences without tags %q", got)
		}
		b.CheckPage(fmt.Sprintf("audiences-empty-%d", width))
	}
	dir := t.TempDir()
	for i, width := range []int{1280, 390} {
		atWidth(b, width)
		tag := fmt.Sprintf("fair %d", width)
		csv := filepath.Join(dir, fmt.Sprintf("contacts-%d.csv", width))
		body := "Telefone,Nome,Sobrenome,Pedido\n(11) 98765-4321,Ana,Silva,A1\n12345,Bad,Number,A2\n,No,Number,A3\n" +
			"+55 11 8765-4321,Ana,Again,A4\n(21) 99876-5432,João,Souza,A5\n+1 415 555 0100,\"=1+1\",Cell,A6\n"
		if err := os.WriteFile(csv, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		name := func(s string) string { return fmt.Sprintf("%s-%d", s, width) }

		b.Run("contacts", chromedp.Navigate(base+"/contacts"), chromedp.WaitVisible("#import-link", chromedp.ByQuery))
		b.PressOn("#import-link")
		b.CheckPage(name("import"))
		b.Run("choose file", chromedp.SetUploadFiles("#import-file", []string{csv}, chromedp.ByQuery))
		b.PressOn(`#import-upload button[type=submit]`)
		if got := b.Text("h1"); got != "Map the spreadsheet's columns" {
			t.Fatalf("after upload: %q", got)
		}
		var chosen string
		b.Eval(`["#map-number", "#map-first", "#map-last"].map(s => document.querySelector(s).value).join("|")`, &chosen)
		if chosen != "Telefone|Nome|Sobrenome" {
			t.Errorf("suggested mapping %q", chosen)
		}
		b.Run("country and tag", chromedp.SetValue("#map-country", "BR", chromedp.ByQuery),
			chromedp.SendKeys("#map-tag", tag, chromedp.ByQuery), chromedp.SendKeys("#var-3", "order", chromedp.ByQuery))
		b.CheckPage(name("import-map"))
		b.FocusAndPress(`#import-map button[type=submit]`)
		if got := b.Text("h1"); got != "Import preview" {
			t.Fatalf("after mapping: %q", got)
		}
		rejected := b.Text("#rejections tbody")
		if !strings.Contains(rejected, "3") || !strings.Contains(rejected, "Not a valid number") || !strings.Contains(rejected, "No number") {
			t.Errorf("rejections listed: %q", rejected)
		}
		if got := b.Text("#count-duplicates"); got != "1" {
			t.Errorf("duplicates merged %q, want 1", got)
		}
		wantAdded := map[int]string{0: "3", 1: "0"}[i] // the second import meets the first one's contacts
		if got := b.Text("#count-added"); got != wantAdded {
			t.Errorf("contacts to add %q, want %s", got, wantAdded)
		}
		b.CheckPage(name("import-preview"))
		b.PressOn("#import-confirm")
		if got := b.Text("main .help"); !strings.Contains(got, "3 contacts tagged “"+tag+"”") {
			t.Errorf("contacts after confirm: %q", got)
		}
		if got := b.Text("#contacts tbody"); !strings.Contains(got, "Ana Silva") || !strings.Contains(got, "João Souza") || !strings.Contains(got, tag) {
			t.Errorf("tagged contacts: %q", got)
		}
		b.CheckPage(name("contacts-tagged"))
		b.PressOn("#save-audience-link")
		b.Run("audience name", chromedp.SendKeys("#audience-name", "Fair visitors "+fmt.Sprint(width), chromedp.ByQuery))
		b.FocusAndPress(`#audience-form button[type=submit]`)
		var count string
		b.Eval(fmt.Sprintf(`Array.from(document.querySelectorAll("#audiences tbody tr")).filter(tr => tr.textContent.includes(%q)).map(tr => tr.querySelector(".audience-count").textContent).join()`,
			"Fair visitors "+fmt.Sprint(width)), &count)
		if count != "3" {
			t.Errorf("the saved audience counts %q contacts, want 3", count)
		}
		b.CheckPage(name("audiences"))
	}
}

// While a large import's contacts wait for the name index, the dashboard says so in Chromium at
// 1280 and 390 px: the confirmation's notice, and a notice above a name search's results; once
// the indexer has drained the backlog, the search finds them and the notice is gone. axe-core
// on each page.
func TestBrowserNameSearchCatchingUp(t *testing.T) {
	env := newEnv(t, true)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acct := signUpInBrowser(t, b, env, "Backlog Bakery", "backlog@example.com")
	// Contacts written as a large import's confirmation writes them (store.ConfirmImport).
	tx, err := env.Store.DB().Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT set_config('gateway.contact_names', 'backlog', true)`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO contacts (account_id, mobile, firstname, lastname)
		SELECT $1::bigint, (447700900000 + g)::text, 'Ana', 'Backlog ' || g FROM generate_series(1, 30) g`, acct); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("confirmation notice", chromedp.Navigate(base+"/contacts?notice=imported-indexing"), chromedp.WaitVisible(".notice", chromedp.ByQuery))
		if got := b.Text(".notice"); !strings.Contains(got, "name search finds the new ones within a few minutes") {
			t.Errorf("confirmation notice %q", got)
		}
		b.CheckPage(fmt.Sprintf("imported-indexing-%d", width))
		b.Run("search during the backlog", chromedp.Navigate(base+"/contacts?search=backlog"), chromedp.WaitVisible("#names-indexing", chromedp.ByQuery))
		if got := b.Text("#names-indexing"); !strings.Contains(got, "Name search is still adding the contacts of a recent import") {
			t.Errorf("backlog notice %q", got)
		}
		b.CheckPage(fmt.Sprintf("search-indexing-%d", width))
	}
	if _, err := worker.NewNameIndexer(env.Store, worker.NameIndexerConfig{}).Drain(context.Background(), acct); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("search after the indexer", chromedp.Navigate(base+"/contacts?search=backlog"), chromedp.WaitVisible("main", chromedp.ByQuery))
		if got := b.Text("main"); strings.Contains(got, "Name search is still adding") || !strings.Contains(got, "30 contacts match") {
			t.Errorf("search after the indexer: %q", got)
		}
		b.CheckPage(fmt.Sprintf("search-indexed-%d", width))
	}
}
