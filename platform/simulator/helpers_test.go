package simulator

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

const (
	testSecret  = "app-secret-for-tests"
	testPhoneID = "106540352242922"
	testWabaID  = "102290129340398"
	testToken   = "EAAG-test-token"
	testDisplay = "15550783881"
)

// waitLimit bounds every wait in the tests; it is a safety net, not a delay.
const waitLimit = 5 * time.Second

// fakeClock is a settable Config.Clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// delivery is one POST received by the test receiver.
type delivery struct {
	body   []byte
	header http.Header
	sigOK  bool
	status int // what the receiver answered
}

// receiver is a webhook endpoint that verifies every signature and reports
// each POST on a channel before answering.
type receiver struct {
	t   *testing.T
	srv *httptest.Server
	ch  chan delivery

	mu       sync.Mutex
	failNext int // answer 500 to this many more POSTs
	all      []delivery
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{t: t, ch: make(chan delivery, 1000)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			q := r.URL.Query()
			if q.Get("hub.mode") == "subscribe" && q.Get("hub.verify_token") == "verify-me" {
				_, _ = io.WriteString(w, q.Get("hub.challenge"))
				return
			}
			w.WriteHeader(http.StatusForbidden)
			return
		}
		body, _ := io.ReadAll(r.Body)
		d := delivery{body: body, header: r.Header.Clone(), sigOK: hmac.Equal([]byte(r.Header.Get(SignatureHeader)), []byte(Sign(testSecret, body))), status: http.StatusOK}
		rc.mu.Lock()
		if rc.failNext > 0 {
			rc.failNext--
			d.status = http.StatusInternalServerError
		}
		rc.all = append(rc.all, d)
		rc.mu.Unlock()
		rc.ch <- d
		w.WriteHeader(d.status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) failFor(n int) {
	rc.mu.Lock()
	rc.failNext = n
	rc.mu.Unlock()
}

// next returns the next POST, failing the test after waitLimit. It checks
// the signature and the content type of every POST.
func (rc *receiver) next() delivery {
	rc.t.Helper()
	select {
	case d := <-rc.ch:
		if !d.sigOK {
			rc.t.Fatalf("bad %s %q on body %s", SignatureHeader, d.header.Get(SignatureHeader), d.body)
		}
		if ct := d.header.Get("Content-Type"); ct != "application/json" {
			rc.t.Fatalf("Content-Type = %q", ct)
		}
		return d
	case <-time.After(waitLimit):
		rc.t.Fatalf("no webhook within %v", waitLimit)
		return delivery{}
	}
}

// none fails if a POST is waiting.
func (rc *receiver) none() {
	rc.t.Helper()
	select {
	case d := <-rc.ch:
		rc.t.Fatalf("unexpected webhook: %s", d.body)
	default:
	}
}

// harness is a started simulator with one number and the default templates.
type harness struct {
	t    *testing.T
	sim  *Simulator
	base string
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	if cfg.AppSecret == "" {
		cfg.AppSecret = testSecret
	}
	sim := New(cfg)
	t.Cleanup(func() { _ = sim.Close() })
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sim.AddNumber(Number{PhoneNumberID: testPhoneID, WabaID: testWabaID, DisplayPhoneNumber: testDisplay, AccessToken: testToken})
	sim.SeedTemplates(testWabaID, DefaultTemplates())
	return &harness{t: t, sim: sim, base: base}
}

// do sends a request and decodes the JSON answer.
func (h *harness) do(method, path, token string, body any) (int, map[string]any, http.Header) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.base+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			h.t.Fatalf("%s %s: answer is not JSON: %s", method, path, raw)
		}
	}
	return resp.StatusCode, out, resp.Header
}

// send POSTs a message as the test number.
func (h *harness) send(body map[string]any) (int, map[string]any) {
	h.t.Helper()
	code, out, _ := h.do(http.MethodPost, "/v23.0/"+testPhoneID+"/messages", testToken, body)
	return code, out
}

func templateSend(to, name, lang string, comps ...map[string]any) map[string]any {
	tpl := map[string]any{"name": name, "language": map[string]any{"code": lang, "policy": "deterministic"}}
	if comps != nil {
		tpl["components"] = comps
	}
	return map[string]any{"messaging_product": "whatsapp", "recipient_type": "individual", "to": to, "type": "template", "template": tpl}
}

func bodyParams(vals ...string) map[string]any {
	ps := make([]any, len(vals))
	for i, v := range vals {
		ps[i] = map[string]any{"type": "text", "text": v}
	}
	return map[string]any{"type": "body", "parameters": ps}
}

// graphErr returns error.code, error.error_subcode, error.message and
// error_data.details of a Graph error body.
func graphErr(t *testing.T, out map[string]any) (code, subcode int, message, details string) {
	t.Helper()
	e, ok := out["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", out)
	}
	code = int(e["code"].(float64))
	if sc, ok := e["error_subcode"].(float64); ok {
		subcode = int(sc)
	}
	message, _ = e["message"].(string)
	if d, ok := e["error_data"].(map[string]any); ok {
		details, _ = d["details"].(string)
		if d["messaging_product"] != "whatsapp" {
			t.Errorf("error_data.messaging_product = %v", d["messaging_product"])
		}
	}
	if tr, _ := e["fbtrace_id"].(string); len(tr) < 5 || tr[0] != 'A' {
		t.Errorf("fbtrace_id = %q", tr)
	}
	if typ, _ := e["type"].(string); typ != "OAuthException" && typ != "GraphMethodException" {
		t.Errorf("type = %q", typ)
	}
	return code, subcode, message, details
}

// statusWebhook is the decoded form of a status delivery.
type statusWebhook struct {
	Object string `json:"object"`
	Entry  []struct {
		ID      string `json:"id"`
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				MessagingProduct string `json:"messaging_product"`
				Metadata         struct {
					DisplayPhoneNumber string `json:"display_phone_number"`
					PhoneNumberID      string `json:"phone_number_id"`
				} `json:"metadata"`
				Statuses []struct {
					ID                    string `json:"id"`
					Status                string `json:"status"`
					Timestamp             string `json:"timestamp"`
					RecipientID           string `json:"recipient_id"`
					BizOpaqueCallbackData string `json:"biz_opaque_callback_data"`
					Conversation          *struct {
						ID     string `json:"id"`
						Origin struct {
							Type string `json:"type"`
						} `json:"origin"`
					} `json:"conversation"`
					Pricing *struct {
						Billable     bool   `json:"billable"`
						PricingModel string `json:"pricing_model"`
						Category     string `json:"category"`
					} `json:"pricing"`
					Errors []struct {
						Code      int    `json:"code"`
						Title     string `json:"title"`
						Message   string `json:"message"`
						Href      string `json:"href"`
						ErrorData struct {
							Details string `json:"details"`
						} `json:"error_data"`
					} `json:"errors"`
				} `json:"statuses"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

// decodeStatus decodes and shape-checks a status delivery and returns its
// only status's name, wamid, recipient_id and the whole payload.
func decodeStatus(t *testing.T, d delivery) (status, wamid, recipient string, w statusWebhook) {
	t.Helper()
	if err := json.Unmarshal(d.body, &w); err != nil {
		t.Fatalf("status webhook: %v: %s", err, d.body)
	}
	if w.Object != "whatsapp_business_account" || len(w.Entry) != 1 || w.Entry[0].ID != testWabaID ||
		len(w.Entry[0].Changes) != 1 || w.Entry[0].Changes[0].Field != "messages" {
		t.Fatalf("bad envelope: %s", d.body)
	}
	v := w.Entry[0].Changes[0].Value
	if v.MessagingProduct != "whatsapp" || v.Metadata.PhoneNumberID != testPhoneID || v.Metadata.DisplayPhoneNumber != testDisplay {
		t.Fatalf("bad value/metadata: %s", d.body)
	}
	if len(v.Statuses) != 1 {
		t.Fatalf("want one status: %s", d.body)
	}
	st := v.Statuses[0]
	if !allDigits(st.Timestamp) {
		t.Fatalf("timestamp %q is not a string of unix seconds", st.Timestamp)
	}
	return st.Status, st.ID, st.RecipientID, w
}
