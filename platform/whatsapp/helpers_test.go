package whatsapp

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden request files from what the client sends")

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assertGoldenJSON checks that got is byte for byte the compacted golden file.
// The golden files are indented for reading; compacting keeps key order and string
// contents, so the comparison still pins the exact bytes sent.
func assertGoldenJSON(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		var buf bytes.Buffer
		if err := json.Indent(&buf, got, "", "  "); err != nil {
			t.Fatalf("request body is not JSON: %v\n%s", err, got)
		}
		buf.WriteByte('\n')
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want bytes.Buffer
	if err := json.Compact(&want, readTestdata(t, name)); err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("request body differs from %s\n got: %s\nwant: %s", name, got, want.Bytes())
	}
}

// recordedRequest is what the fake platform saw.
type recordedRequest struct {
	Method     string
	RequestURI string
	Path       string
	Query      url.Values
	Header     http.Header
	Body       []byte
}

// fakePlatform is an httptest server that records requests and answers with respond.
type fakePlatform struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recordedRequest
}

func newFakePlatform(t *testing.T, respond func(w http.ResponseWriter, r *http.Request)) *fakePlatform {
	t.Helper()
	f := &fakePlatform{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recordedRequest{
			Method: r.Method, RequestURI: r.RequestURI, Path: r.URL.Path,
			Query: r.URL.Query(), Header: r.Header.Clone(), Body: body,
		})
		f.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakePlatform) requests() []recordedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recordedRequest(nil), f.reqs...)
}

func answer(status int, body []byte) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}
}
