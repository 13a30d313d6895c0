package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gateway/platform/simulator"
	"gateway/server"
	"gateway/server/servertest"
	"gateway/store"
)

// uploadRequest is a POST /v1/media with a multipart form: the file (with its part's
// Content-Type when partType is set) and the type field when typ is set.
func uploadRequest(t testing.TB, key, filename, partType, typ string, data []byte) servertest.Request {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if typ != "" {
		if err := mw.WriteField("type", typ); err != nil {
			t.Fatal(err)
		}
	}
	if data != nil {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
		if partType != "" {
			h.Set("Content-Type", partType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	mw.Close()
	return servertest.Request{Method: http.MethodPost, Path: "/v1/media", Key: key, Body: b.Bytes(),
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}}
}

type uploaded struct {
	MediaID  string  `json:"media_id"`
	Kind     string  `json:"kind"`
	MimeType string  `json:"mime_type"`
	FileSize int64   `json:"file_size"`
	SHA256   string  `json:"sha256"`
	Mode     *string `json:"mode"`
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// wantFile checks a 200 media answer: the bytes, their type and length, and Repr-Digest naming
// their SHA-256.
func wantFile(t testing.TB, r *servertest.Response, contentType, wantSHA string) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("want 200, got %d %s", r.Status, r.Body)
	}
	if got := sha256Hex(r.Body); got != wantSHA {
		t.Fatalf("body sha256 %s, want %s (%d bytes)", got, wantSHA, len(r.Body))
	}
	if ct := r.Header.Get("Content-Type"); ct != contentType {
		t.Fatalf("Content-Type %q, want %q", ct, contentType)
	}
	if cl := r.Header.Get("Content-Length"); cl != strconv.Itoa(len(r.Body)) {
		t.Fatalf("Content-Length %q for %d bytes", cl, len(r.Body))
	}
	sum, _ := hex.DecodeString(wantSHA)
	if d := r.Header.Get("Repr-Digest"); d != "sha-256=:"+base64.StdEncoding.EncodeToString(sum)+":" {
		t.Fatalf("Repr-Digest %q", d)
	}
}

// A customer's image, fetched through GET /v1/media/{id} with the account's key: the
// simulator's bytes, checked against the webhook's sha256. Another account's key, an unknown id
// and a malformed id are refused; a test key gets the fixture image.
func TestMediaDownloadInbound(t *testing.T) {
	env := servertest.New(t, servertest.Config{Simulator: quietSim()})
	a := env.NewTenant("Acme Ltd")
	conn := env.ConnectNumber(a)
	other := env.NewTenant("Other Ltd")
	env.ConnectNumber(other)

	in, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: "15551234567", Name: "Ana",
		Type: "image", Payload: map[string]any{"caption": "my receipt"}, MediaSize: 300_000})
	if err != nil {
		t.Fatal(err)
	}
	r := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/" + in.MediaID, Key: a.Live})
	wantFile(t, r, "image/jpeg", in.SHA256)
	if len(r.Body) != 300_000 {
		t.Fatalf("%d bytes, want 300000", len(r.Body))
	}

	// The same id with another account's key: not theirs.
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/" + in.MediaID, Key: other.Live}), http.StatusNotFound, "not_found")
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/123456789", Key: a.Live}), http.StatusNotFound, "not_found")
	bad := wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/a%20b", Key: a.Live}), http.StatusUnprocessableEntity, "validation_failed")
	if !strings.Contains(bad.Message, "path.media_id") {
		t.Fatalf("422 names %q", bad.Message)
	}
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/" + in.MediaID}), http.StatusUnauthorized, "unauthorized")

	// The platform no longer has it (deleted, or past its 30 days): 404 saying so.
	del, _ := http.NewRequest(http.MethodDelete, env.SimURL+"/v23.0/"+in.MediaID, nil)
	del.Header.Set("Authorization", "Bearer "+conn.AccessToken)
	if resp, err := http.DefaultClient.Do(del); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("delete on the simulator: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	gone := wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/" + in.MediaID, Key: a.Live}), http.StatusNotFound, "not_found")
	if !strings.Contains(gone.Message, "no longer has") {
		t.Fatalf("404 of a media id the platform dropped: %q", gone.Message)
	}

	// Test keys: the fixture image for the fixture id, nothing else.
	fx := env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/" + server.TestMediaID, Key: a.Test})
	if !bytes.HasPrefix(fx.Body, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("fixture is not a PNG: % x", fx.Body[:min(8, len(fx.Body))])
	}
	wantFile(t, fx, "image/png", sha256Hex(fx.Body))
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/" + in.MediaID, Key: a.Test}), http.StatusNotFound, "not_found")
}

// Media of an account without a connected number cannot be fetched: 409.
func TestMediaNumberNotConnected(t *testing.T) {
	env := servertest.New(t, servertest.Config{Simulator: quietSim()})
	a := env.NewTenant("Acme Ltd")
	if err := env.Store.RecordMediaUpload(context.Background(), a.Account.ID, store.MediaUploadRecord{MediaID: "4242",
		Kind: "image", MimeType: "image/png", Size: 3, SHA256: sha256Hex([]byte("abc"))}); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/4242", Key: a.Live}), http.StatusConflict, "number_not_connected")
	wantFailure(t, env.Do(uploadRequest(t, a.Live, "a.png", "image/png", "", []byte("png bytes"))), http.StatusConflict, "number_not_connected")
}

// An upload is checked against the platform's limits before the platform is called, reaches the
// simulator, and is the uploading account's to read back.
func TestMediaUpload(t *testing.T) {
	env := servertest.New(t, servertest.Config{Simulator: quietSim()})
	a := env.NewTenant("Acme Ltd")
	env.ConnectNumber(a)
	other := env.NewTenant("Other Ltd")
	env.ConnectNumber(other)

	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("invoice line\n"), 5000)...)
	var up uploaded
	wantOK(t, env.Do(uploadRequest(t, a.Live, "invoice.pdf", "application/octet-stream", "application/pdf", pdf)), &up)
	if up.Kind != "document" || up.MimeType != "application/pdf" || up.FileSize != int64(len(pdf)) || up.SHA256 != sha256Hex(pdf) || up.Mode != nil {
		t.Fatalf("upload answer %+v", up)
	}
	sim, ok := env.Sim.Media(up.MediaID)
	if !ok || !sim.Uploaded || sim.SHA256 != sha256Hex(pdf) || sim.Filename != "invoice.pdf" || sim.MimeType != "application/pdf" {
		t.Fatalf("the simulator holds %+v (known %t)", sim, ok)
	}
	wantFile(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/" + up.MediaID, Key: a.Live}), "application/pdf", sha256Hex(pdf))
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodGet, Path: "/v1/media/" + up.MediaID, Key: other.Live}), http.StatusNotFound, "not_found")

	// The type from the file part when the form has no type field.
	png := []byte("\x89PNG\r\n\x1a\nnot really an image")
	wantOK(t, env.Do(uploadRequest(t, a.Live, "a.png", "image/png", "", png)), &up)
	if up.Kind != "image" || up.MimeType != "image/png" {
		t.Fatalf("upload answer %+v", up)
	}

	// Refusals before any platform call.
	uploads := env.Sim.Uploads
	before := uploads()
	r := wantFailure(t, env.Do(uploadRequest(t, a.Live, "x.gif", "image/gif", "", []byte("GIF89a"))), http.StatusUnprocessableEntity, "validation_failed")
	if !strings.Contains(r.Errors["type"][0], "does not take") {
		t.Fatalf("422 for a gif: %+v", r.Errors)
	}
	wantFailure(t, env.Do(uploadRequest(t, a.Live, "x.bin", "", "", []byte{1, 2, 3})), http.StatusUnprocessableEntity, "validation_failed")
	big := wantFailure(t, env.Do(uploadRequest(t, a.Live, "big.jpg", "image/jpeg", "", make([]byte, 5<<20+1))), http.StatusRequestEntityTooLarge, "payload_too_large")
	if !strings.Contains(big.Message, "image") || !strings.Contains(big.Message, "5242880") {
		t.Fatalf("413 for a 5 MiB + 1 image: %q", big.Message)
	}
	sticker := wantFailure(t, env.Do(uploadRequest(t, a.Live, "s.webp", "image/webp", "", make([]byte, 500<<10+1))), http.StatusRequestEntityTooLarge, "payload_too_large")
	if !strings.Contains(sticker.Message, "sticker") || !strings.Contains(sticker.Message, "500 KiB") {
		t.Fatalf("413 for a large sticker: %q", sticker.Message)
	}
	wantFailure(t, env.Do(uploadRequest(t, a.Live, "", "", "image/png", nil)), http.StatusUnprocessableEntity, "validation_failed")
	wantFailure(t, env.Do(servertest.Request{Method: http.MethodPost, Path: "/v1/media", Key: a.Live, Body: map[string]any{"file": "x"}}), http.StatusUnprocessableEntity, "validation_failed")
	wantFailure(t, env.Do(uploadRequest(t, a.Live, "empty.png", "image/png", "", []byte{})), http.StatusUnprocessableEntity, "validation_failed")
	wantFailure(t, env.Do(uploadRequest(t, "", "a.png", "image/png", "", png)), http.StatusUnauthorized, "unauthorized")
	if n := uploads(); n != before {
		t.Fatalf("refused uploads reached the platform: %d uploads, want %d", n, before)
	}

	// A test key's upload is checked and simulated.
	var tu uploaded
	wantOK(t, env.Do(uploadRequest(t, a.Test, "a.png", "image/png", "", png)), &tu)
	if tu.Mode == nil || *tu.Mode != "test" || tu.Kind != "image" || tu.SHA256 != sha256Hex(png) || tu.MediaID == "" {
		t.Fatalf("test upload %+v", tu)
	}
	if n := uploads(); n != before {
		t.Fatal("a test key's upload reached the platform")
	}
	wantFailure(t, env.Do(uploadRequest(t, a.Test, "big.jpg", "image/jpeg", "", make([]byte, 5<<20+1))), http.StatusRequestEntityTooLarge, "payload_too_large")
}

// Streaming a media file holds one bounded buffer, whatever the file's size: a 48 MiB document
// from the simulator passes through the gateway (and the simulator and this client, all in this
// process) while the heap in use grows by far less than the file.
func TestMediaStreamMemoryConstant(t *testing.T) {
	env := servertest.New(t, servertest.Config{Simulator: quietSim()})
	a := env.NewTenant("Acme Ltd")
	conn := env.ConnectNumber(a)
	const size = 48 << 20
	in, err := env.Sim.Inject(simulator.Inbound{PhoneNumberID: conn.PhoneNumberID, From: "15551234567", Name: "Ana",
		Type: "document", Payload: map[string]any{"filename": "scan.pdf"}, MediaSize: size})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	req, _ := http.NewRequest(http.MethodGet, env.URL+"/v1/media/"+in.MediaID, nil)
	req.Header.Set("Authorization", "Bearer "+a.Live)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	resp.Body.Close()
	close(stop)
	<-sampled
	if err != nil || n != size || hex.EncodeToString(h.Sum(nil)) != in.SHA256 {
		t.Fatalf("read %d of %d bytes (%v), sha256 %x want %s", n, size, err, h.Sum(nil), in.SHA256)
	}
	growth := int64(peak.Load()) - int64(base)
	t.Logf("%d MiB streamed; heap in use grew by at most %.1f MiB", size>>20, float64(growth)/(1<<20))
	if growth > 12<<20 {
		t.Fatalf("the heap grew by %d bytes while streaming %d: the file is being held in memory", growth, size)
	}
}
