package whatsapp_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/platform/whatsapp"
)

const (
	convPhoneID = "106540352242922"
	convWabaID  = "102290129340398"
	convToken   = "EAAG-conv-token"
)

// convSim is a simulator with one number whose webhooks land, verified, on a channel.
type convSim struct {
	sim    *simulator.Simulator
	c      *whatsapp.Client
	bodies chan []byte
}

func startConvSim(t *testing.T, cfg simulator.Config) *convSim {
	t.Helper()
	cs := &convSim{bodies: make(chan []byte, 100)}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !whatsapp.VerifySignature([]byte(simAppSecret), b, r.Header.Get(whatsapp.SignatureHeaderName)) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		cs.bodies <- b
	}))
	t.Cleanup(rcv.Close)
	cfg.AppSecret, cfg.WebhookURL = simAppSecret, rcv.URL
	cs.sim = simulator.New(cfg)
	t.Cleanup(func() { _ = cs.sim.Close() })
	base, err := cs.sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cs.sim.AddNumber(simulator.Number{PhoneNumberID: convPhoneID, WabaID: convWabaID, DisplayPhoneNumber: "15550783881", AccessToken: convToken})
	cs.sim.SeedTemplates(convWabaID, simulator.DefaultTemplates())
	cs.c = whatsapp.NewClient(base+"/v23.0", nil)
	return cs
}

// next parses the next webhook and returns its only inbound message.
func (cs *convSim) next(t *testing.T) whatsapp.InboundMessage {
	t.Helper()
	select {
	case b := <-cs.bodies:
		p, err := whatsapp.ParseWebhook(b)
		if err != nil {
			t.Fatal(err)
		}
		v := p.Entry[0].Changes[0].Value
		if v.Err != nil || len(v.Messages) != 1 {
			t.Fatalf("value err %v, %d messages: %s", v.Err, len(v.Messages), b)
		}
		return v.Messages[0]
	case <-time.After(5 * time.Second):
		t.Fatal("no webhook")
		return whatsapp.InboundMessage{}
	}
}

// Every kind the simulator plays parses into its typed value, with no item error.
func TestSimulatorInboundParses(t *testing.T) {
	cs := startConvSim(t, simulator.Config{})
	quoted := "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJDNUE3MkY4QTg2RDk5Q0Y3QTMA"
	check := map[string]func(m whatsapp.InboundMessage) bool{
		"text":     func(m whatsapp.InboundMessage) bool { return m.TextContent() == "hi" },
		"image":    func(m whatsapp.InboundMessage) bool { return m.Image.Caption == "look" && m.Image.SHA256 != "" },
		"video":    func(m whatsapp.InboundMessage) bool { return m.Video.MimeType == "video/mp4" },
		"audio":    func(m whatsapp.InboundMessage) bool { return m.Audio.Voice },
		"document": func(m whatsapp.InboundMessage) bool { return m.Document.Filename == "a.pdf" },
		"sticker":  func(m whatsapp.InboundMessage) bool { return m.Sticker.Animated },
		"location": func(m whatsapp.InboundMessage) bool {
			return m.Location.Latitude == 37.5 && m.Location.URL == "https://example.com/x"
		},
		"contacts": func(m whatsapp.InboundMessage) bool {
			return m.Contacts[0].Name.FormattedName == "Bo" && m.Contacts[0].Phones[0].WaID == "1555"
		},
		"interactive": func(m whatsapp.InboundMessage) bool {
			return m.Interactive.NFMReply != nil && m.Interactive.NFMReply.FlowToken == "t1" && string(m.Interactive.NFMReply.ResponseJSON) == `{"flow_token":"t1","a":1}`
		},
		"button":   func(m whatsapp.InboundMessage) bool { return m.Button.Payload == "P" && m.Context.ID == quoted },
		"reaction": func(m whatsapp.InboundMessage) bool { return m.Reaction.MessageID == quoted && m.Reaction.Removed() },
		"order": func(m whatsapp.InboundMessage) bool {
			return m.Order.ProductItems[0].Quantity == 2 && m.Order.ProductItems[0].ItemPrice == 9.5
		},
		"edit": func(m whatsapp.InboundMessage) bool {
			return m.Edit.OriginalMessageID == quoted && m.Edit.Message.TextContent() == "edited"
		},
		"revoke": func(m whatsapp.InboundMessage) bool { return m.Revoke.OriginalMessageID == quoted },
		"unsupported": func(m whatsapp.InboundMessage) bool {
			return len(m.Errors) == 1 && m.Errors[0].Code == 131051
		},
	}
	payloads := map[string]any{
		"text":        map[string]any{"body": "hi"},
		"image":       map[string]any{"caption": "look"},
		"video":       nil,
		"audio":       map[string]any{"voice": true},
		"document":    map[string]any{"filename": "a.pdf"},
		"sticker":     map[string]any{"animated": true},
		"location":    map[string]any{"latitude": 37.5, "longitude": -122.1, "url": "https://example.com/x"},
		"contacts":    []any{map[string]any{"name": map[string]any{"formatted_name": "Bo"}, "phones": []any{map[string]any{"phone": "+1 555", "wa_id": "1555"}}}},
		"interactive": map[string]any{"type": "nfm_reply", "nfm_reply": map[string]any{"name": "flow", "body": "Sent", "response_json": `{"flow_token":"t1","a":1}`}},
		"button":      map[string]any{"payload": "P", "text": "T"},
		"reaction":    map[string]any{"message_id": quoted, "emoji": ""},
		"order":       map[string]any{"catalog_id": "1537", "product_items": []any{map[string]any{"product_retailer_id": "s", "quantity": 2, "item_price": 9.5, "currency": "USD"}}},
		"edit":        map[string]any{"original_message_id": quoted, "message": map[string]any{"type": "text", "text": map[string]any{"body": "edited"}}},
		"revoke":      map[string]any{"original_message_id": quoted},
		"unsupported": nil,
	}
	for typ, ok := range check {
		in := simulator.Inbound{PhoneNumberID: convPhoneID, From: "+1 555 123 4567", Name: "Ana", Type: typ, Payload: payloads[typ]}
		if typ == "button" {
			in.ContextMessageID = quoted
		}
		res, err := cs.sim.Inject(in)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		m := cs.next(t)
		want := whatsapp.Sender{WaID: "15551234567", UserID: simulator.UserIDFor("15551234567"), Name: "Ana"}
		if m.Err != nil || m.Type != typ || m.ID != res.Wamid || m.Sender != want || !ok(m) {
			t.Errorf("%s: err %v, sender %+v, message %s", typ, m.Err, m.Sender, m.Raw)
		}
		if m.Window() != whatsapp.ServiceWindow {
			t.Errorf("%s: window %v", typ, m.Window())
		}
	}

	// A username-only user, then their number change and user id change.
	if _, err := cs.sim.Inject(simulator.Inbound{PhoneNumberID: convPhoneID, UserID: "BR.1349", Username: "ana.makes", Name: "Ana", Type: "text",
		Payload: map[string]any{"body": "oi"}, Referral: map[string]any{"source_type": "ad", "ctwa_clid": "c1"}}); err != nil {
		t.Fatal(err)
	}
	m := cs.next(t)
	if m.Err != nil || m.From != "" || m.Sender != (whatsapp.Sender{UserID: "BR.1349", Username: "ana.makes", Name: "Ana"}) ||
		m.Referral == nil || m.Referral.CtwaClid != "c1" || m.Window() != whatsapp.EntryPointWindow {
		t.Errorf("username-only: %+v (err %v)", m.Sender, m.Err)
	}
	if _, err := cs.sim.ChangeNumber(convPhoneID, "15551234567", "15559990000"); err != nil {
		t.Fatal(err)
	}
	m = cs.next(t)
	if m.Err != nil || m.System == nil || m.System.Type != whatsapp.SystemUserChangedNumber || m.System.WaID != "15559990000" ||
		m.System.PreviousUserID != simulator.UserIDFor("15551234567") || m.System.UserID != simulator.UserIDFor("15559990000") || m.Sender.WaID != "15551234567" {
		t.Errorf("number change: %+v %+v (err %v)", m.System, m.Sender, m.Err)
	}
	if _, err := cs.sim.ChangeUserID(convPhoneID, "BR.1349", "BR.2468"); err != nil {
		t.Fatal(err)
	}
	m = cs.next(t)
	if m.Err != nil || m.System == nil || m.System.Type != whatsapp.SystemUserChangedUserID || m.System.UserID != "BR.2468" || m.System.PreviousUserID != "BR.1349" {
		t.Errorf("user id change: %+v (err %v)", m.System, m.Err)
	}
}

// An inbound image's media: looked up with the token, streamed, and checked against the sha256
// of the webhook; then an upload answered by id, to a user id; and the closed window as 131047.
func TestSimulatorMediaAndAnswers(t *testing.T) {
	ctx := context.Background()
	cs := startConvSim(t, simulator.Config{EnforceServiceWindow: true, ServiceWindowSync: true})
	if _, err := cs.sim.Inject(simulator.Inbound{PhoneNumberID: convPhoneID, From: "15551234567", Name: "Ana", Type: "image", MediaSize: 3 << 20}); err != nil {
		t.Fatal(err)
	}
	m := cs.next(t)
	info, err := cs.c.MediaURL(ctx, convToken, m.Image.ID)
	if err != nil || info.FileSize != 3<<20 || info.MimeType != "image/jpeg" {
		t.Fatalf("MediaURL = %+v, %v", info, err)
	}
	st, err := cs.c.DownloadMedia(ctx, convToken, info.URL)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.Copy(h, st)
	st.Close()
	if err != nil || n != 3<<20 || st.ContentLength != 3<<20 || st.ContentType != "image/jpeg" {
		t.Fatalf("download: %d bytes, %v", n, err)
	}
	if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != m.Image.SHA256 {
		t.Fatalf("downloaded file's sha256 %s, the webhook's %s", got, m.Image.SHA256)
	}
	if _, err := cs.c.DownloadMedia(ctx, "wrong-token", info.URL); err == nil {
		t.Error("download with a wrong token succeeded")
	}

	id, err := cs.c.UploadMedia(ctx, convToken, convPhoneID, "leaflet.pdf", "application/pdf", strings.NewReader("%PDF-1.7 leaflet"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.c.SendMessage(ctx, convToken, convPhoneID, whatsapp.Message{To: "+15551234567", ReplyTo: m.ID,
		Document: &whatsapp.MediaMessage{ID: id, Filename: "leaflet.pdf", Caption: "Our leaflet"}})
	if err != nil || res.WaID != "15551234567" || res.UserID != simulator.UserIDFor("15551234567") {
		t.Fatalf("send document: %+v, %v", res, err)
	}
	sent := cs.sim.Sent()
	if len(sent) != 1 || sent[0].Type != "document" || sent[0].ReplyTo != m.ID || !strings.Contains(string(sent[0].Content), id) {
		t.Fatalf("sent %+v", sent)
	}
	uid := simulator.UserIDFor("15551234567")
	if res, err := cs.c.SendMessage(ctx, convToken, convPhoneID, whatsapp.Message{ToUserID: uid, Text: &whatsapp.TextMessage{Body: "by user id"}}); err != nil || res.UserID != uid {
		t.Fatalf("send to a user id: %+v, %v", res, err)
	}
	_, err = cs.c.SendMessage(ctx, convToken, convPhoneID, whatsapp.Message{To: "15550001111", Text: &whatsapp.TextMessage{Body: "nobody wrote"}})
	if !errors.Is(err, whatsapp.ErrOutsideWindow) {
		t.Fatalf("outside the window: %v", err)
	}
	if err := cs.c.MarkRead(ctx, convToken, convPhoneID, m.ID, true); err != nil || cs.sim.MarkedRead()[0] != m.ID {
		t.Fatalf("MarkRead: %v", err)
	}
}

// BenchmarkDownloadMedia100MB streams a 100 MB inbound document from the simulator through
// MediaURL and DownloadMedia, hashing it as it passes (b.SetBytes: the MB/s column is the
// throughput).
func BenchmarkDownloadMedia100MB(b *testing.B) {
	ctx := context.Background()
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer rcv.Close()
	sim := simulator.New(simulator.Config{AppSecret: simAppSecret, WebhookURL: rcv.URL})
	defer sim.Close()
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	sim.AddNumber(simulator.Number{PhoneNumberID: convPhoneID, WabaID: convWabaID, DisplayPhoneNumber: "15550783881", AccessToken: convToken})
	res, err := sim.Inject(simulator.Inbound{PhoneNumberID: convPhoneID, From: "15551234567", Type: "document", MediaSize: 100 << 20})
	if err != nil {
		b.Fatal(err)
	}
	c := whatsapp.NewClient(base+"/v23.0", nil)
	b.SetBytes(100 << 20)
	for b.Loop() {
		info, err := c.MediaURL(ctx, convToken, res.MediaID)
		if err != nil {
			b.Fatal(err)
		}
		st, err := c.DownloadMedia(ctx, convToken, info.URL)
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.New()
		if n, err := io.Copy(h, st); err != nil || n != 100<<20 {
			b.Fatalf("%d bytes, %v", n, err)
		}
		st.Close()
		if got := hex.EncodeToString(h.Sum(nil)); got != info.SHA256 {
			b.Fatalf("sha256 %s, the lookup's %s", got, info.SHA256)
		}
	}
}
