package whatsapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMediaURL(t *testing.T) {
	fp := newFakePlatform(t, answer(http.StatusOK, []byte(`{"url":"https:\/\/lookaside.fbsbx.com\/whatsapp_business\/attachments\/?mid=1003383421387256&ext=1","mime_type":"image\/jpeg","sha256":"5113d447a6df2fa2731f6a9ae87f6f7de6a2de98bb74a604525d072fca54106a","file_size":303833,"id":"1003383421387256","messaging_product":"whatsapp"}`)))
	c := NewClient(fp.URL+"/v23.0", nil)
	info, err := c.MediaURL(context.Background(), testToken, "1003383421387256")
	if err != nil {
		t.Fatal(err)
	}
	want := MediaInfo{ID: "1003383421387256", URL: "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1003383421387256&ext=1",
		MimeType: "image/jpeg", SHA256: "5113d447a6df2fa2731f6a9ae87f6f7de6a2de98bb74a604525d072fca54106a", FileSize: 303833}
	if info != want {
		t.Errorf("info = %+v", info)
	}
	r := fp.requests()[0]
	if r.Method != http.MethodGet || r.RequestURI != "/v23.0/1003383421387256" || r.Header.Get("Authorization") != "Bearer "+testToken {
		t.Errorf("request = %s %s %v", r.Method, r.RequestURI, r.Header)
	}

	unknown := newFakePlatform(t, answer(http.StatusBadRequest, []byte(`{"error":{"message":"Unsupported get request. Object with ID '9' does not exist","type":"GraphMethodException","code":100,"error_subcode":33,"fbtrace_id":"A1"}}`)))
	_, err = NewClient(unknown.URL+"/v23.0", nil).MediaURL(context.Background(), testToken, "9")
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != 100 || pe.Subcode != 33 {
		t.Errorf("unknown media: %v", err)
	}
	noURL := newFakePlatform(t, answer(http.StatusOK, []byte(`{"id":"9"}`)))
	if _, err := NewClient(noURL.URL+"/v23.0", nil).MediaURL(context.Background(), testToken, "9"); !errors.Is(err, ErrMalformedResponse) {
		t.Errorf("no url: %v", err)
	}
	if _, err := c.MediaURL(context.Background(), testToken, " "); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("empty id: %v", err)
	}
}

// pattern returns n deterministic bytes.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// DownloadMedia returns as soon as the headers arrive: the test reads the first part of the
// file while the server still holds back the rest, so nothing waits for (or buffers) the whole.
func TestDownloadMediaStreams(t *testing.T) {
	file := pattern(3 << 20)
	half := len(file) / 2
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "image/jpeg")
		w.Header().Set("Content-Length", strconv.Itoa(len(file)))
		w.Write(file[:half])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(5 * time.Second):
			return
		}
		w.Write(file[half:])
	}))
	defer srv.Close()
	c := NewClient(srv.URL+"/v23.0", nil)
	c.SetTimeout(time.Second)
	st, err := c.DownloadMedia(context.Background(), testToken, srv.URL+"/media/1?ext=1")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.ContentType != "image/jpeg" || st.ContentLength != int64(len(file)) {
		t.Errorf("stream = %q %d", st.ContentType, st.ContentLength)
	}
	first := make([]byte, half)
	if _, err := io.ReadFull(st, first); err != nil {
		t.Fatalf("first half: %v", err)
	}
	close(release)
	rest, err := io.ReadAll(st)
	if err != nil {
		t.Fatalf("rest: %v", err)
	}
	if !bytes.Equal(append(first, rest...), file) {
		t.Error("downloaded bytes differ")
	}
}

// The client's timeout bounds the wait for the headers (a timeout error), not the transfer.
func TestDownloadMediaTimeouts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-headers" {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
			return
		}
		w.Header().Set("Content-Type", "video/mp4")
		w.Write([]byte("part one,"))
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
		w.Write([]byte("part two"))
	}))
	defer srv.Close()
	c := NewClient(srv.URL+"/v23.0", nil)
	c.SetTimeout(100 * time.Millisecond)
	start := time.Now()
	_, err := c.DownloadMedia(context.Background(), testToken, srv.URL+"/slow-headers")
	if !errors.Is(err, ErrUnavailable) || !IsTimeout(err) || time.Since(start) > time.Second {
		t.Errorf("slow headers: %v after %v", err, time.Since(start))
	}
	st, err := c.DownloadMedia(context.Background(), testToken, srv.URL+"/slow-body")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(st)
	st.Close()
	if err != nil || string(b) != "part one,part two" {
		t.Errorf("slow body: %q, %v", b, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err = c.DownloadMedia(ctx, testToken, srv.URL+"/slow-body")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.ReadAll(st); !errors.Is(err, ErrUnavailable) {
		t.Errorf("read after cancel: %v", err)
	}
	st.Close()
}

func TestDownloadMediaRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"message":"URL expired","type":"OAuthException","code":100}}`))
	}))
	defer srv.Close()
	c := NewClient(srv.URL+"/v23.0", nil)
	_, err := c.DownloadMedia(context.Background(), testToken, srv.URL+"/media/expired")
	var pe *Error
	if !errors.As(err, &pe) || pe.HTTPStatus != 404 || pe.Message != "URL expired" {
		t.Errorf("expired: %v", err)
	}
	for _, u := range []string{"http://elsewhere.example/media/1", "ftp://" + strings.TrimPrefix(srv.URL, "http://") + "/x", "/relative", "::"} {
		if _, err := c.DownloadMedia(context.Background(), testToken, u); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("DownloadMedia(%q) = %v, want ErrInvalidArgument", u, err)
		}
	}
	if _, err := c.DownloadMedia(context.Background(), "", srv.URL+"/m"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("no token: %v", err)
	}
}

func TestMediaLimitFor(t *testing.T) {
	for mt, want := range map[string]MediaLimit{
		"image/jpeg":             {TypeImage, 5 << 20},
		"IMAGE/PNG":              {TypeImage, 5 << 20},
		"audio/ogg; codecs=opus": {TypeAudio, 16 << 20},
		"video/mp4":              {TypeVideo, 16 << 20},
		"application/pdf":        {TypeDocument, 100 << 20},
		"image/webp":             {TypeSticker, 500 << 10},
	} {
		if got, ok := MediaLimitFor(mt); !ok || got != want {
			t.Errorf("MediaLimitFor(%q) = %+v, %v", mt, got, ok)
		}
	}
	for _, mt := range []string{"image/gif", "application/x-msdownload", "", "not a type"} {
		if _, ok := MediaLimitFor(mt); ok {
			t.Errorf("MediaLimitFor(%q) accepted", mt)
		}
	}
}

func TestUploadMedia(t *testing.T) {
	file := pattern(1 << 20)
	type seen struct {
		fields   map[string]string
		filename string
		partType string
		data     []byte
	}
	fp := newFakePlatform(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id":"2740293829834"}`))
	})
	c := NewClient(fp.URL+"/v23.0", nil)
	id, err := c.UploadMedia(context.Background(), testToken, testPhoneID, "brochure.pdf", "application/pdf", bytes.NewReader(file))
	if err != nil || id != "2740293829834" {
		t.Fatalf("UploadMedia = %q, %v", id, err)
	}
	r := fp.requests()[0]
	if r.Method != http.MethodPost || r.RequestURI != "/v23.0/"+testPhoneID+"/media" || r.Header.Get("Authorization") != "Bearer "+testToken {
		t.Fatalf("request = %s %s", r.Method, r.RequestURI)
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type = %q", r.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(r.Body), params["boundary"])
	s := seen{fields: map[string]string{}}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		if p.FormName() == "file" {
			s.filename, s.partType, s.data = p.FileName(), p.Header.Get("Content-Type"), b
		} else {
			s.fields[p.FormName()] = string(b)
		}
	}
	if s.fields["messaging_product"] != "whatsapp" || s.fields["type"] != "application/pdf" || s.filename != "brochure.pdf" ||
		s.partType != "application/pdf" || !bytes.Equal(s.data, file) {
		t.Errorf("form = %v, file %q %q (%d bytes)", s.fields, s.filename, s.partType, len(s.data))
	}
}

func TestUploadMediaRefusals(t *testing.T) {
	fp := newFakePlatform(t, answer(http.StatusOK, []byte(`{"id":"1"}`)))
	c := NewClient(fp.URL+"/v23.0", nil)
	if _, err := c.UploadMedia(context.Background(), testToken, testPhoneID, "a.gif", "image/gif", strings.NewReader("GIF89a")); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("gif: %v", err)
	}
	if n := len(fp.requests()); n != 0 {
		t.Errorf("%d requests for a refused type", n)
	}
	big := io.LimitReader(zeros{}, 5<<20+1)
	_, err := c.UploadMedia(context.Background(), testToken, testPhoneID, "a.jpg", "image/jpeg", big)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), fmt.Sprint(5<<20)) {
		t.Errorf("6 MB image: %v", err)
	}
	exact := io.LimitReader(zeros{}, 5<<20)
	if _, err := c.UploadMedia(context.Background(), testToken, testPhoneID, "a.jpg", "image/jpeg", exact); err != nil {
		t.Errorf("5 MB image: %v", err)
	}
	platformRefuses := newFakePlatform(t, answer(http.StatusBadRequest, []byte(`{"error":{"message":"(#131053) Media upload error","type":"OAuthException","code":131053,"error_data":{"details":"Unsupported file type"}}}`)))
	_, err = NewClient(platformRefuses.URL+"/v23.0", nil).UploadMedia(context.Background(), testToken, testPhoneID, "a.jpg", "image/jpeg", strings.NewReader("x"))
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != 131053 {
		t.Errorf("platform refusal: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
