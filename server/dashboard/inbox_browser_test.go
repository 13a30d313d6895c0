package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"gateway/platform/simulator"
	"gateway/server/dashboard"
	"gateway/server/dashboard/browsertest"
	"gateway/server/servertest"
	"gateway/store"
)

// inboxClock is a clock the test moves forward (the service window's expiry).
type inboxClock struct{ offset atomic.Int64 }

func (c *inboxClock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *inboxClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// inboxEnv is a gateway with the simulator on the test's clock; statuses follow quickly.
func inboxEnv(t *testing.T, clock *inboxClock) *servertest.Env {
	t.Helper()
	c := &testConnector{}
	env := servertest.New(t, servertest.Config{
		Dashboard: dashboard.Options{Development: true, SignupOpen: true, WebhookAllowPrivate: true},
		Connector: c,
		Clock:     clock.now,
		Simulator: &simulator.Config{SentDelay: 50 * time.Millisecond, DeliveredDelay: time.Hour, ReadDelay: time.Hour, Clock: clock.now},
	})
	c.st = env.Store
	return env
}

// conversationOf is the id of the contact's conversation with that number.
func conversationOf(t *testing.T, env *servertest.Env, acc int64, mobile string) int64 {
	t.Helper()
	var id int64
	if err := env.Store.DB().Get(&id, `SELECT v.id FROM conversations v JOIN contacts c ON c.account_id = v.account_id AND c.id = v.contact_id
		WHERE v.account_id = $1 AND c.mobile = $2`, acc, mobile); err != nil {
		t.Fatal(err)
	}
	return id
}

// A handset writes text, a photo, a location and a document; the thread shows each as a person
// reads it (the photo from the dashboard's media route, never the platform's URL; the document
// as a download with its name; the place with its coordinates and a map link), and opening it
// sends the read receipt. A teammate answers with text and with a photo uploaded from the
// composer: the simulator records both as sent to that handset, from the panel. Then the
// window expires (the clock moves 25 hours) and the composer offers the template send for this
// contact instead. axe-core on every state; screenshots at 1280 and 390 px.
func TestBrowserInboxThread(t *testing.T) {
	clock := &inboxClock{}
	env := inboxEnv(t, clock)
	b := browsertest.New(t)
	base := env.URL + "/dashboard"
	acc := signUpInBrowser(t, b, env, "Inbox Bakery", "inbox@example.com")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Inbox Bakery"}})
	const from = "5511987654321"
	inject := func(kind string, payload any) simulator.Injected {
		t.Helper()
		res, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: from, Name: "Ana Souza", Type: kind, Payload: payload})
		if err != nil {
			t.Fatalf("inject %s: %v", kind, err)
		}
		return res
	}
	inject("text", map[string]any{"body": "Do you have the chocolate cake today?"})
	img := inject("image", map[string]any{"mime_type": "image/jpeg", "caption": "Like this one"})
	inject("location", map[string]any{"latitude": -23.55052, "longitude": -46.633308, "name": "Praça da Sé", "address": "São Paulo"})
	doc := inject("document", map[string]any{"mime_type": "application/pdf", "filename": "order-list.pdf"})
	conv := conversationOf(t, env, acc, from)
	thread := fmt.Sprintf("%s/inbox/%d", base, conv)

	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("open thread", chromedp.Navigate(thread), chromedp.WaitVisible("#thread", chromedp.ByQuery))
		b.CheckPage(fmt.Sprintf("inbox-thread-%d", width))
		var overflow int
		b.Eval(`document.documentElement.scrollWidth - window.innerWidth`, &overflow)
		if overflow > 0 {
			t.Errorf("the thread scrolls sideways by %d px at %d", overflow, width)
		}
	}
	atWidth(b, 1280)
	if got := b.Text("#thread"); !strings.Contains(got, "Do you have the chocolate cake today?") || !strings.Contains(got, "Like this one") ||
		!strings.Contains(got, "Praça da Sé") || !strings.Contains(got, "23.55052° S, 46.63331° W") || !strings.Contains(got, "order-list.pdf") {
		t.Fatalf("the thread reads:\n%s", got)
	}
	var src, mapLink, docHref string
	b.Eval(`document.querySelector('li[data-kind="image"] img').getAttribute("src")`, &src)
	b.Eval(`document.querySelector('.msg-location a').href`, &mapLink)
	b.Eval(`document.querySelector('.msg-document a').getAttribute("href")`, &docHref)
	if src != "/dashboard/media/"+img.MediaID || !strings.Contains(mapLink, "mlat=-23.55") ||
		docHref != "/dashboard/media/"+doc.MediaID+"?download=order-list.pdf" {
		t.Fatalf("image src %q, map link %q, document link %q", src, mapLink, docHref)
	}
	// The photo's bytes come through the dashboard, checked against the platform's SHA-256.
	var got string
	b.Run("fetch the photo", chromedp.Evaluate(fmt.Sprintf(`fetch(%q).then(r => r.status + " " + r.headers.get("Content-Length"))`, src), &got,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if want := fmt.Sprintf("200 %d", img.MediaSize); got != want {
		t.Fatalf("the photo through the dashboard: %s, want %s", got, want)
	}
	if marked := env.Sim.MarkedRead(); len(marked) == 0 || marked[len(marked)-1] != doc.Wamid {
		t.Fatalf("read receipts sent: %v, want the newest message %s", marked, doc.Wamid)
	}

	// A text answer, then a photo uploaded from the composer.
	b.Run("type answer", chromedp.SendKeys("#a-body", "Yes! Until 6 pm.", chromedp.ByQuery))
	b.PressOn("#answer-send")
	if f := b.Text("main .notice"); !strings.Contains(f, "The answer was sent") {
		t.Fatalf("after the answer: %q", f)
	}
	photo := filepath.Join(t.TempDir(), "cake.png")
	if err := os.WriteFile(photo, testPNG(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Run("attach", chromedp.Click("#attach > summary", chromedp.ByQuery), chromedp.SetUploadFiles("#a-file", []string{photo}, chromedp.ByQuery),
		chromedp.SendKeys("#a-body", "Here it is", chromedp.ByQuery))
	b.PressOn("#answer-send")
	if f := b.Text("main .notice"); !strings.Contains(f, "The answer was sent") {
		t.Fatalf("after the photo: %q (%s)", f, b.Text("main"))
	}
	sent := env.Sim.Sent()
	if len(sent) != 2 || sent[0].Type != "text" || sent[0].TextBody != "Yes! Until 6 pm." || sent[1].Type != "image" ||
		sent[0].WaID != from || sent[1].WaID != from || !strings.Contains(string(sent[1].Content), `"caption":"Here it is"`) {
		for _, m := range sent {
			t.Logf("sent %s to %s: %s", m.Type, m.WaID, m.Content)
		}
		t.Fatalf("the simulator recorded %d sends", len(sent))
	}
	var panel int
	if err := env.Store.DB().Get(&panel, `SELECT count(*) FROM messages WHERE account_id = $1 AND direction = 'out' AND source = 'panel'`, acc); err != nil || panel != 2 {
		t.Fatalf("%d panel answers recorded (%v)", panel, err)
	}
	if got := b.Text("#thread"); !strings.Contains(got, "Yes! Until 6 pm.") || !strings.Contains(got, "A teammate, from the dashboard") {
		t.Fatalf("the thread after answering:\n%s", got)
	}
	b.CheckPage("inbox-thread-answered")

	// Every other kind, a reply quoting our answer, a reaction to it, a photo whose file is
	// real (the one uploaded above), an edit and a deletion: the thread reads each in words.
	var uploaded struct {
		ID string `json:"id"`
	}
	json.Unmarshal(sent[1].Content, &uploaded)
	inject("image", map[string]any{"id": uploaded.ID, "mime_type": "image/png", "caption": "The real photo"})
	inject("video", map[string]any{"mime_type": "video/mp4", "caption": "Unboxing"})
	inject("audio", map[string]any{"mime_type": "audio/ogg", "voice": true})
	inject("sticker", map[string]any{"mime_type": "image/webp"})
	inject("contacts", []any{map[string]any{"name": map[string]any{"formatted_name": "Bruno Lima", "first_name": "Bruno"},
		"phones": []any{map[string]any{"phone": "+55 11 91234-5678", "wa_id": "5511912345678", "type": "CELL"}}}})
	inject("interactive", map[string]any{"type": "button_reply", "button_reply": map[string]any{"id": "yes", "title": "Yes, deliver"}})
	inject("interactive", map[string]any{"type": "list_reply", "list_reply": map[string]any{"id": "choc", "title": "Chocolate, 1 kg"}})
	inject("interactive", map[string]any{"type": "nfm_reply", "nfm_reply": map[string]any{"name": "flow", "body": "Sent",
		"response_json": `{"flow_token":"t1","delivery_date":"2026-12-01","slices":"12"}`}})
	inject("button", map[string]any{"payload": "more-info", "text": "Tell me more"})
	inject("order", map[string]any{"catalog_id": "cat-1", "text": "For Saturday", "product_items": []any{
		map[string]any{"product_retailer_id": "cake-choc", "quantity": 2, "item_price": 45.5, "currency": "BRL"}}})
	reply, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: from, Type: "text",
		Payload: map[string]any{"body": "Great, thanks"}, ContextMessageID: sent[0].Wamid})
	if err != nil {
		t.Fatal(err)
	}
	inject("reaction", map[string]any{"message_id": sent[0].Wamid, "emoji": "❤️"})
	typo := inject("text", map[string]any{"body": "See you tmorow"})
	gone := inject("text", map[string]any{"body": "Wrong chat, sorry"})
	ctx := context.Background()
	if _, err := env.Store.RecordInboundEdit(ctx, acc, store.InboundEdit{OriginalPlatformID: typo.Wamid, At: clock.now(), Type: "text",
		Content: json.RawMessage(`{"type":"edit","edit":{"original_message_id":"` + typo.Wamid + `","message":{"type":"text","text":{"body":"See you tomorrow"}}}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.RecordInboundDeletion(ctx, acc, gone.Wamid, clock.now()); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("thread with every kind", chromedp.Navigate(thread), chromedp.WaitVisible("#thread", chromedp.ByQuery))
		b.CheckPage(fmt.Sprintf("inbox-every-kind-%d", width))
	}
	atWidth(b, 1280)
	all := b.Text("#thread")
	for _, want := range []string{"Unboxing", "Voice message", "Bruno Lima", "+55 11 91234-5678", "Chose “Yes, deliver”",
		"Chose “Chocolate, 1 kg”", "Delivery date", "2026-12-01", "Chose “Tell me more”", "2 × cake-choc at 45.50 BRL", "Total 91.00 BRL",
		"See you tomorrow", "It first read:", "See you tmorow", "The customer deleted this message", "The real photo"} {
		if !strings.Contains(all, want) {
			t.Errorf("the thread does not read %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "Wrong chat, sorry") {
		t.Errorf("the deleted message's text is still shown")
	}
	if q := b.Text(fmt.Sprintf("#m%d .msg-quote", messageID(t, env, acc, reply.Wamid))); q != "You: Yes! Until 6 pm." {
		t.Errorf("the reply quotes %q", q)
	}
	if r := b.Text(fmt.Sprintf("#m%d .msg-reactions", messageID(t, env, acc, sent[0].Wamid))); !strings.Contains(r, "❤️") || !strings.Contains(r, "Customer") {
		t.Errorf("our answer's reactions read %q", r)
	}
	var loaded bool
	b.Run("real photo loads", chromedp.Poll(`Array.from(document.querySelectorAll('li[data-kind="image"] img')).some(i => i.complete && i.naturalWidth > 0)`, &loaded))

	// The window expires: the composer says since when and offers the template send.
	clock.advance(25 * time.Hour)
	for _, width := range []int{1280, 390} {
		atWidth(b, width)
		b.Run("reload thread", chromedp.Navigate(thread), chromedp.WaitVisible("#send-template", chromedp.ByQuery))
		var form bool
		b.Eval(`!!document.querySelector("#answer-form")`, &form)
		if w := b.Text("#window-state"); form || !strings.Contains(w, "service window closed on") {
			t.Fatalf("with the window closed: form %v, %q", form, w)
		}
		b.CheckPage(fmt.Sprintf("inbox-closed-%d", width))
	}
	var href string
	b.Eval(`document.querySelector("#send-template").getAttribute("href")`, &href)
	if href != "/dashboard/send?destination="+from {
		t.Fatalf("template send link %q", href)
	}
}

// messageID is our id of the account's message with that wamid.
func messageID(t *testing.T, env *servertest.Env, acc int64, wamid string) int64 {
	t.Helper()
	var id int64
	if err := env.Store.DB().Get(&id, `SELECT id FROM messages WHERE account_id = $1 AND platform_message_id = $2`, acc, wamid); err != nil {
		t.Fatalf("message %s: %v", wamid, err)
	}
	return id
}

// testPNG is a 160×120 PNG: a cake-coloured block on cream, so the screenshots show a photo.
func testPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 160, 120))
	for y := 0; y < 120; y++ {
		for x := 0; x < 160; x++ {
			c := color.RGBA{250, 240, 220, 255}
			if x > 40 && x < 120 && y > 30 && y < 95 {
				c = color.RGBA{110, 60, 30, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}
