package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/whatsapp"
	"gateway/server"
	"gateway/server/servertest"
	"gateway/store"
)

// fakeGraph is a platform whose media endpoints misbehave per media id: the failures the
// simulator does not produce (a lookup that never answers, a file over the platform's limit, a
// refusal, a download shorter than announced or stalling midway, bytes that do not match).
type fakeGraph struct {
	srv     *httptest.Server
	content []byte
	// uploadMode: "hang" never answers an upload, "refuse" refuses it.
	uploadMode atomic.Value
}

const fakeFileSize = 200_000

func newFakeGraph(t *testing.T) *fakeGraph {
	f := &fakeGraph{content: make([]byte, fakeFileSize)}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range f.content {
		f.content[i] = byte(rng.UintN(256))
	}
	f.uploadMode.Store("hang")
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func graphError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"OAuthException","code":%d,"fbtrace_id":"AbC"}}`, msg, code)
}

func (f *fakeGraph) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v23.0/")
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/media"):
		io.Copy(io.Discard, r.Body)
		if f.uploadMode.Load() == "refuse" {
			graphError(w, http.StatusBadRequest, 131053, "Media upload error")
			return
		}
		<-r.Context().Done()
	case strings.HasPrefix(r.URL.Path, "/dl/"):
		f.download(w, r, strings.TrimPrefix(r.URL.Path, "/dl/"))
	default:
		size := fakeFileSize
		switch path {
		case "slow":
			<-r.Context().Done()
			return
		case "refused":
			graphError(w, http.StatusUnauthorized, 190, "Error validating access token")
			return
		case "huge":
			size = 200 << 20
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"url":"%s/dl/%s","mime_type":"application/pdf","sha256":"","file_size":%d,"id":%q,"messaging_product":"whatsapp"}`,
			f.srv.URL, path, size, path)
	}
}

func (f *fakeGraph) download(w http.ResponseWriter, r *http.Request, id string) {
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Length", strconv.Itoa(len(f.content)))
	w.WriteHeader(http.StatusOK)
	switch id {
	case "short":
		w.Write(f.content[:len(f.content)/2])
		panic(http.ErrAbortHandler) // the connection breaks before the announced length
	case "stall":
		w.Write(f.content[:len(f.content)/2])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	default: // "good" and "mismatch": the same bytes; the recorded sum differs
		w.Write(f.content)
	}
}

// getRaw fetches a media file without servertest's reading: a cut body is a read error here.
func getRaw(t *testing.T, env *servertest.Env, key, id string) (*http.Response, []byte, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, env.URL+"/v1/media/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// The platform's failures, each as the API documents it: no answer in time is a 504, a refusal
// and a file over the platform's limit are 502s, and a file that does not arrive whole or does
// not match the webhook's sha256 is cut before its last byte (the connection closes with the
// body short of Content-Length), logged and counted.
func TestMediaPlatformFailures(t *testing.T) {
	fg := newFakeGraph(t)
	wa := whatsapp.NewClient(fg.srv.URL+"/v23.0", nil)
	wa.SetTimeout(300 * time.Millisecond)
	env := servertest.New(t, servertest.Config{Platform: wa,
		Options: server.Options{SendTimeout: 300 * time.Millisecond, MetricsToken: metricsToken}})
	a := env.NewTenant("Acme Ltd")
	env.ConnectNumber(a)
	good := sha256Hex(fg.content)
	for id, sum := range map[string]string{"slow": good, "refused": good, "huge": good, "short": good, "stall": good,
		"good": base64.StdEncoding.EncodeToString(mustHex(t, good)), "mismatch": sha256Hex([]byte("another file"))} {
		if err := env.Store.RecordMediaUpload(context.Background(), a.Account.ID, store.MediaUploadRecord{MediaID: id,
			Kind: "document", MimeType: "application/pdf", Size: fakeFileSize, SHA256: sum}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(id string) *servertest.Response {
		return env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/" + id, Key: a.Live})
	}

	// A whole, matching file (the webhook's sum given in base64) passes.
	wantFile(t, get("good"), "application/pdf", good)

	timeout := wantFailure(t, get("slow"), http.StatusGatewayTimeout, "platform_unavailable")
	if !strings.Contains(timeout.Message, "did not answer in time") {
		t.Fatalf("504 message %q", timeout.Message)
	}
	refused := wantFailure(t, get("refused"), http.StatusBadGateway, "platform_rejected")
	if !strings.Contains(refused.Message, "code 190") {
		t.Fatalf("502 message %q", refused.Message)
	}
	huge := wantFailure(t, get("huge"), http.StatusBadGateway, "platform_unavailable")
	if !strings.Contains(huge.Message, strconv.Itoa(200<<20)) {
		t.Fatalf("502 message for a file over the limit %q", huge.Message)
	}

	before := scrape(t, env)
	for _, c := range []struct{ id, outcome string }{{"mismatch", "checksum_mismatch"}, {"short", "incomplete"}, {"stall", "incomplete"}} {
		resp, body, err := getRaw(t, env, a.Live, c.id)
		if resp.StatusCode != http.StatusOK || resp.ContentLength != fakeFileSize {
			t.Fatalf("%s: %d, Content-Length %d", c.id, resp.StatusCode, resp.ContentLength)
		}
		if err == nil || len(body) >= fakeFileSize {
			t.Fatalf("%s: the client read %d of %d bytes without an error (%v): a bad file looked complete", c.id, len(body), fakeFileSize, err)
		}
	}
	after := scrape(t, env)
	for outcome, want := range map[string]float64{"checksum_mismatch": 1, "incomplete": 2} {
		l := map[string]string{"outcome": outcome}
		if got := value(after, "gateway_media_downloads_total", l) - value(before, "gateway_media_downloads_total", l); got != want {
			t.Errorf("gateway_media_downloads_total{outcome=%q} moved by %v, want %v", outcome, got, want)
		}
	}

	// Uploads: no answer in time, then a refusal.
	wantFailure(t, env.Do(uploadRequest(t, a.Live, "a.pdf", "application/pdf", "", []byte("%PDF-1.7"))), http.StatusGatewayTimeout, "platform_unavailable")
	fg.uploadMode.Store("refuse")
	wantFailure(t, env.Do(uploadRequest(t, a.Live, "a.pdf", "application/pdf", "", []byte("%PDF-1.7"))), http.StatusBadGateway, "platform_rejected")
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b := make([]byte, len(s)/2)
	if _, err := fmt.Sscanf(s, "%x", &b); err != nil {
		t.Fatal(err)
	}
	return b
}
