package dashboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"gateway/server/dashboard/browsertest"
	"gateway/server/servertest"
	"gateway/store"
)

// signUpInBrowser signs a new workspace up in the browser and returns its account id.
func signUpInBrowser(t *testing.T, b *browsertest.Browser, env *servertest.Env, workspace, email string) int64 {
	t.Helper()
	b.Run("open sign-up", chromedp.Navigate(env.URL+"/dashboard/signup"), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.Run("fill sign-up",
		chromedp.SendKeys("#workspace", workspace, chromedp.ByQuery),
		chromedp.SendKeys("#email", email, chromedp.ByQuery),
		chromedp.SendKeys("#password", "a long enough password", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/signup"] button[type=submit]`)
	return accountOf(t, env.Store, email)
}

// atWidth sets the browser's viewport width (the height stays 900).
func atWidth(b *browsertest.Browser, width int) {
	b.T.Helper()
	b.Run(fmt.Sprintf("viewport %d", width), chromedp.EmulateViewport(int64(width), 900))
	b.Width = width
}

// The console at a phone's width (390 px) and a desktop's (1280 px), in Chromium with axe-core on
// every page: at 390 px the header and navigation fold behind a "Menu" button that opens them
// (a disclosure, no script needed), no page scrolls sideways, every table row is a card with its
// Status cell on screen and labelled, key prefixes stay on one line and the chart's axis text is
// at least 11 px; at 1280 px the navigation shows without the button and tables stay tables.
func TestBrowserPhoneLayout(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Layout Bakery", "layout@example.com")
	s := seedReports(t, env, acc)
	b.Run("keys", chromedp.Navigate(base+"/keys"), chromedp.WaitVisible("#name", chromedp.ByQuery),
		chromedp.SendKeys("#name", "Shop server", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/keys"] button[type=submit]`)

	bc, err := env.Store.CreateBroadcast(context.Background(), acc, store.BroadcastInput{Name: "Layout sale", PhoneNumberID: "1",
		TemplateName: "order_confirmation", TemplateLanguage: "en_US"}, []store.RecipientInput{{Mobile: "5511987654321"}, {Mobile: "5511987654322"}})
	if err != nil {
		t.Fatal(err)
	}
	pages := []struct{ name, path, statusCells string }{
		{"overview", "/", ""},
		{"messages", "/messages", "#messages td.status"},
		{"keys", "/keys", "#keys td.status"},
		{"webhooks", "/webhooks", "#endpoints td.status"},
		{"request-log", "/request-log", "#attempts td.status"},
		{"campaigns", "/campaigns", "#campaigns td"},
		{"campaign", fmt.Sprintf("/campaigns/%d", s.campaign), "#failure-reasons td"},
		{"contacts", "/contacts", "#contacts td"},
		{"contact", fmt.Sprintf("/contacts/%d", s.contact), "#contact-messages td.status"},
		{"message", fmt.Sprintf("/messages/%d", s.failed), ""},
		{"broadcasts", "/broadcasts", "#broadcasts td.status"},
		{"broadcast", fmt.Sprintf("/broadcasts/%d", bc.ID), "#recipients td.status"},
	}
	// Every other page of a signed-in owner, each with one row of what it lists.
	id := func(q string) int64 {
		t.Helper()
		var n int64
		if err := env.Store.DB().Get(&n, q, acc); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	for _, p := range []struct{ name, path string }{
		{"templates", "/templates"},
		{"send", "/send"},
		{"broadcast-new", "/broadcasts/new"},
		{"key", fmt.Sprintf("/keys/%d", id(`SELECT id FROM api_keys WHERE account_id = $1 ORDER BY id DESC LIMIT 1`))},
		{"webhook", fmt.Sprintf("/webhooks/%d", id(`SELECT id FROM webhook_endpoints WHERE account_id = $1 LIMIT 1`))},
		{"attempt", fmt.Sprintf("/request-log/%d", s.attempt)},
		{"api-errors", "/api-errors"},
		{"audit", "/audit"},
		{"audit-entry", fmt.Sprintf("/audit/%d", id(`SELECT id FROM audit_log WHERE account_id = $1 LIMIT 1`))},
		{"members", "/members"},
		{"inbox", "/inbox"},
		{"inbox-thread", fmt.Sprintf("/inbox/%d", id(`SELECT id FROM conversations WHERE account_id = $1 ORDER BY id LIMIT 1`))},
		{"member", fmt.Sprintf("/members/%d", id(`SELECT user_id FROM memberships WHERE account_id = $1 LIMIT 1`))},
		{"invite", "/invite"},
		{"workspaces", "/workspaces"},
		{"password", "/password"},
		{"signup-signed-in", "/signup"},
		{"not-found", "/no-such-page"},
		{"import", "/contacts/import"},
		{"import-preview", fmt.Sprintf("/contacts/imports/%d", seedImport(t, env, acc))},
		{"audiences", "/audiences"},
	} {
		pages = append(pages, struct{ name, path, statusCells string }{p.name, p.path, ""})
	}
	for _, width := range []int{390, 1280} {
		atWidth(b, width)
		narrow := width < 700
		for _, p := range pages {
			name := fmt.Sprintf("%s-%d", p.name, width)
			b.Run("open "+name, chromedp.Navigate(base+p.path), chromedp.WaitVisible("main", chromedp.ByQuery))
			var overflow int
			b.Eval(`document.documentElement.scrollWidth - window.innerWidth`, &overflow)
			if overflow > 0 {
				t.Errorf("%s scrolls sideways by %d px", name, overflow)
			}
			// A table's cells carry the label of the heading above them (phones show it beside
			// each value), so a heading out of order with its cells shows on both widths.
			var mislabelled string
			b.Eval(`Array.from(document.querySelectorAll("table")).flatMap(t => {
				const heads = Array.from(t.querySelectorAll("thead th")).map(th => th.textContent.trim());
				return Array.from(t.querySelectorAll("tbody tr")).flatMap(tr => Array.from(tr.children)
					.map((td, i) => [td.dataset.label, heads[i]])
					.filter(([label, head]) => label !== undefined && head !== undefined && label !== head && !head.startsWith(label + " ("))
					.map(([label, head]) => (t.id || "table") + ": " + label + " under " + head));
			}).join(" | ")`, &mislabelled)
			if mislabelled != "" {
				t.Errorf("%s: cells under another column's heading: %s", name, mislabelled)
			}
			var navShown, menuButton bool
			b.Eval(`document.querySelector('nav a[href="/dashboard/messages"]').checkVisibility()`, &navShown)
			b.Eval(`document.querySelector('details.menu > summary').checkVisibility()`, &menuButton)
			if narrow {
				var header float64
				b.Eval(`document.querySelector('header.top').getBoundingClientRect().height`, &header)
				if navShown || !menuButton || header > 70 {
					t.Errorf("%s: navigation shown %v, menu button shown %v, header %.0f px high (want hidden, shown, ≤ 70)", name, navShown, menuButton, header)
				}
			} else if !navShown || menuButton {
				t.Errorf("%s: navigation shown %v, menu button shown %v (want shown, hidden)", name, navShown, menuButton)
			}
			if p.statusCells != "" {
				var bad string
				b.Eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).filter(td => {
					const r = td.getBoundingClientRect();
					return r.width === 0 || r.right > window.innerWidth + 0.5 || (%v && !getComputedStyle(td, "::before").content.includes(td.dataset.label || "\u0000"));
				}).map(td => td.dataset.label + ": " + td.textContent.trim()).join(" | ")`, p.statusCells, narrow), &bad)
				if bad != "" {
					t.Errorf("%s: cells off screen or unlabelled: %s", name, bad)
				}
				var display string
				b.Eval(fmt.Sprintf(`getComputedStyle(document.querySelector(%q).closest("tr")).display`, p.statusCells), &display)
				if want := map[bool]string{true: "block", false: "table-row"}[narrow]; display != want {
					t.Errorf("%s: table rows display as %s, want %s", name, display, want)
				}
			}
			b.CheckPage(name)
		}

		// Key prefixes stay on one line.
		b.Run("keys again", chromedp.Navigate(base+"/keys"), chromedp.WaitVisible("code.keyprefix", chromedp.ByQuery))
		var lines float64
		b.Eval(`(() => { const c = document.querySelector("code.keyprefix"); return c.getClientRects().length; })()`, &lines)
		if lines != 1 {
			t.Errorf("at %d px the key prefix spans %v lines", width, lines)
		}

		// The chart's axis text is at least 11 px on screen.
		b.Run("campaign chart", chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d", base, s.campaign)), chromedp.WaitVisible("#campaign-chart", chromedp.ByQuery))
		var px float64
		b.Eval(`(() => { const svg = document.querySelector("#campaign-chart");
			const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
			return Math.min(...Array.from(svg.querySelectorAll("text.tick")).filter(t => t.checkVisibility())
				.map(t => parseFloat(getComputedStyle(t).fontSize) * scale)); })()`, &px)
		if px < 11 {
			t.Errorf("at %d px the chart's axis text is %.1f px", width, px)
		}
	}

	// At 390 px the menu opens with the keyboard and shows every link, and a link in it works.
	atWidth(b, 390)
	b.Run("overview", chromedp.Navigate(base+"/"), chromedp.WaitVisible("details.menu > summary", chromedp.ByQuery))
	b.Run("focus menu", chromedp.Focus("details.menu > summary", chromedp.ByQuery), chromedp.KeyEvent("\r"))
	var links string
	b.Eval(`Array.from(document.querySelectorAll("nav a")).filter(a => a.checkVisibility()).map(a => a.textContent).join("|")`, &links)
	for _, want := range []string{"Overview", "Messages", "Campaigns", "Webhooks", "Request log", "Audit log", "Workspaces"} {
		if !strings.Contains(links, want) {
			t.Errorf("the open menu shows %q, without %s", links, want)
		}
	}
	b.CheckPage("menu-open-390")
	b.PressOn(`nav a[href="/dashboard/campaigns"]`)
	if !strings.HasSuffix(b.Location(), "/dashboard/campaigns") {
		t.Fatalf("the menu's Campaigns link led to %s", b.Location())
	}
}
