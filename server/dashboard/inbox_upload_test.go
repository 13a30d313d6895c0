package dashboard_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"regexp"
	"testing"

	"gateway/platform/simulator"
	"gateway/server/servertest"
	"gateway/store"
)

var reThreadKey = regexp.MustCompile(`name="key" value="([^"]+)"`)

// A photo as large as phones take (2 MiB, past the API's 1 MiB body limit) goes out from a
// thread's composer: the upload reaches the domain's media upload and the platform gets an image
// answer, instead of the API's generic 413.
func TestInboxAnswerTakesALargePhoto(t *testing.T) {
	env := inboxEnv(t, &inboxClock{})
	a := signUp(t, env, "Acme", "owner@acme.example")
	acc := accountOf(t, env.Store, "owner@acme.example")
	conn := env.ConnectNumber(servertest.Tenant{Account: store.Account{ID: acc, Name: "Acme"}})
	if _, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: "5511987654321", Name: "Ana", Type: "text",
		Payload: map[string]any{"body": "Can I see it?"}}); err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("/dashboard/inbox/%d", conversationOf(t, env, acc, "5511987654321"))
	p := a.get(page)
	m := reThreadKey.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil {
		t.Fatalf("thread: %d, key found %v", p.Status, m != nil)
	}

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{"key": m[1], "body": "Here it is"} {
		mw.WriteField(k, v)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="photo.png"`)
	h.Set("Content-Type", "image/png")
	fw, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte("\x89PNG\r\n\x1a\n"))
	fw.Write(make([]byte, 2<<20))
	mw.Close()
	req, err := http.NewRequest("POST", a.base+page+"/answer", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := a.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("answer with a 2 MiB photo: %d\n%s", resp.StatusCode, got)
	}
	sent := env.Sim.Sent()
	if len(sent) != 1 || sent[0].Type != "image" {
		t.Fatalf("the platform got %+v", sent)
	}
}
