package dashboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"gateway/platform/simulator"
	"gateway/server/dashboard/browsertest"
	"gateway/server/servertest"
	"gateway/store"
)

// A rich template sent from the panel in real Chromium, axe-core on each page: the form of
// spring_sale shows its media and button inputs, the preview renders the image link and the
// button's URL with its suffix, an http link is refused next to its input (aria-invalid), and
// the corrected form reaches the simulator with the image header and the URL button value.
func TestBrowserPanelRichSend(t *testing.T) {
	env := reportsEnv(t)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	b.Run("open sign-up", chromedp.Navigate(base+"/signup"), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.Run("fill sign-up",
		chromedp.SendKeys("#workspace", "Rich Co", chromedp.ByQuery),
		chromedp.SendKeys("#email", "rich@example.com", chromedp.ByQuery),
		chromedp.SendKeys("#password", "a long enough password", chromedp.ByQuery))
	b.PressOn(`form[action="/dashboard/signup"] button[type=submit]`)
	acc := accountOf(t, env.Store, "rich@example.com")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Rich Co"}})
	env.Sim.SeedTemplates(conn.WabaID, simulator.RichTemplates())
	if _, err := env.Server.SyncTemplates(context.Background(), acc); err != nil {
		t.Fatal(err)
	}
	var tpl int64
	if err := env.Store.DB().Get(&tpl, `SELECT id FROM templates WHERE account_id = $1 AND name = 'spring_sale'`, acc); err != nil {
		t.Fatal(err)
	}
	b.Run("send page", chromedp.Navigate(fmt.Sprintf("%s/send?template=%d", base, tpl)), chromedp.WaitVisible("#send-form", chromedp.ByQuery))
	b.Run("fill send",
		chromedp.SendKeys("#s-destination", "5511987654321", chromedp.ByQuery),
		chromedp.SendKeys("#s-media-link", "http://cdn.example.com/spring.jpg", chromedp.ByQuery),
		chromedp.SendKeys("#s-body-0", "Ana", chromedp.ByQuery),
		chromedp.SendKeys("#s-button-0", "SPRING24", chromedp.ByQuery))
	b.PressOn("#preview-button")
	if got := b.Text("#preview-header"); got != "Image: http://cdn.example.com/spring.jpg" {
		t.Fatalf("preview header %q", got)
	}
	if got := b.Text("#preview-buttons"); !strings.Contains(got, "Shop now” → https://shop.example.com/sale/SPRING24") {
		t.Fatalf("preview buttons %q", got)
	}
	b.CheckPage("send-rich")
	b.PressOn("#send-button")
	if got := b.Text("#s-media-link-error"); !strings.Contains(got, "a public https:// link") {
		t.Fatalf("media link error %q", got)
	}
	var invalid string
	b.Eval(`document.querySelector("#s-media-link").getAttribute("aria-invalid")`, &invalid)
	if invalid != "true" {
		t.Fatalf("the refused input is not marked invalid: %q", invalid)
	}
	b.CheckPage("send-rich-refused")
	if n := len(env.Sim.Sent()); n != 0 {
		t.Fatalf("the refused send reached the simulator: %d", n)
	}
	b.Run("correct the link", chromedp.SetValue("#s-media-link", "https://cdn.example.com/spring.jpg", chromedp.ByQuery))
	b.PressOn("#send-button")
	var msgID int64
	if _, err := fmt.Sscanf(b.Location(), env.URL+"/dashboard/messages/%d", &msgID); err != nil {
		t.Fatalf("after the send: %s", b.Location())
	}
	b.CheckPage("message-rich")
	sent := env.Sim.Sent()
	if len(sent) != 1 || sent[0].BizOpaqueCallbackData != fmt.Sprint(msgID) ||
		!strings.Contains(string(sent[0].Components), `{"type":"image","image":{"link":"https://cdn.example.com/spring.jpg"}}`) ||
		!strings.Contains(string(sent[0].Components), `{"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"SPRING24"}]}`) {
		t.Fatalf("the simulator received %+v", sent)
	}
}
